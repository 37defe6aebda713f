// A training loop llmprof does not ship, profiled through its public API: a small convolutional
// classifier of 16x16 images holding a horizontal (label 0) or vertical (label 1) bar in noise,
// generated on the fly. Its own module scopes (conv1, conv2, head) appear in modules.csv forward
// and backward; `llmprof report` and `llmprof plot` read the run directory it writes.
//
// Data-parallel: `--nproc N` starts N ranks of this program on this machine (llmprof's local
// launcher, the torchrun-style environment); each trains on its own batches with DDP's gradient
// sync through llmprof::dist::DataParallel, a participant of the same Session and Step. They
// write what `llmprof train --nproc N` writes: <top>/rank<k>/ for each rank (at profile.level=
// modules|ops its trace.json naming the rank, with its gradient all-reduces), and at the top the
// merged steps.csv and summary.json and the communication analysis (comm_steps.csv, ...), which
// rank 0 writes in session.finish().
//
//   custom_loop [config.yaml] [--nproc N] [key=value ...]     e.g. custom_loop profile.level=ops
#include <llmprof/dist/data_parallel.h>
#include <llmprof/dist/launch.h>
#include <llmprof/dist/rank_env.h>
#include <llmprof/llmprof.h>
#include <llmprof/process/child.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int64_t kBatch = 32, kSide = 16;

// (B, 1, 16, 16) images and (B,) labels: one bright row or column at a random place, plus noise.
std::pair<torch::Tensor, torch::Tensor> make_batch() {
  torch::Tensor labels = torch::randint(0, 2, {kBatch}, torch::kLong);
  torch::Tensor where = torch::randint(0, kSide, {kBatch}, torch::kLong);
  torch::Tensor x = 0.3 * torch::randn({kBatch, 1, kSide, kSide});
  auto l = labels.accessor<int64_t, 1>();
  auto w = where.accessor<int64_t, 1>();
  for (int64_t b = 0; b < kBatch; ++b) {
    if (l[b] == 0) {
      x[b][0][w[b]] += 1.0;  // horizontal bar: one row
    } else {
      x[b][0].select(1, w[b]) += 1.0;  // vertical bar: one column
    }
  }
  return {x, labels};
}

struct NetImpl : torch::nn::Module {
  NetImpl()
      : conv1(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 8, 3).padding(1)))),
        conv2(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(8, 16, 3).padding(1)))),
        head(register_module("head", torch::nn::Linear(16 * 4 * 4, 2))) {}

  // x (B, 1, 16, 16) -> logits (B, 2)
  torch::Tensor forward(torch::Tensor x) {
    {
      LLMPROF_NAMED_SCOPE("conv1", -1);
      x = torch::max_pool2d(torch::relu(conv1->forward(x)), 2);  // (B, 8, 8, 8)
    }
    {
      LLMPROF_NAMED_SCOPE("conv2", -1);
      x = torch::max_pool2d(torch::relu(conv2->forward(x)), 2);  // (B, 16, 4, 4)
    }
    LLMPROF_NAMED_SCOPE("head", -1);
    return head->forward(x.flatten(1));
  }
  torch::nn::Conv2d conv1, conv2;
  torch::nn::Linear head;
};
TORCH_MODULE(Net);

// --nproc N: N ranks of this program (its arguments without --nproc), each told its place through
// the environment; returns the launcher's exit code (a failed rank's own).
int launch_ranks(int64_t nproc, const std::vector<std::string>& args) {
  llmprof::dist::LaunchOptions opts;
  opts.master_port = llmprof::dist::free_port();
  opts.threads = llmprof::dist::threads_per_rank(llmprof::process::usable_cores(), nproc);
  const std::string exe = llmprof::process::self_executable();
  for (int64_t rank = 0; rank < nproc; ++rank) {
    std::vector<std::string> argv{exe};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("threads=" + std::to_string(opts.threads));
    opts.rank_argv.push_back(std::move(argv));
  }
  opts.on_rank_line = [](int64_t rank, const std::string& line) {
    std::fprintf(stderr, "[rank %lld] %s\n", static_cast<long long>(rank), line.c_str());
  };
  opts.on_note = [](const std::string& note) {
    std::fprintf(stderr, "custom_loop: %s\n", note.c_str());
  };
  return llmprof::dist::launch_local(opts).exit_code;
}

// The command line: an optional config file, key=value overrides, --nproc N.
struct Args {
  std::string path;
  std::vector<std::string> overrides = {"output.name=custom-loop", "schedule.max_steps=60",
                                        "schedule.warmup_steps=0",
                                        "train.batch_size=" + std::to_string(kBatch)};
  std::vector<std::string> rank_args;  // the arguments without --nproc
  int64_t nproc = 1;
};

Args parse_args(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--nproc" && i + 1 < argc) {
      args.nproc = std::stoll(argv[++i]);
      continue;
    }
    args.rank_args.push_back(arg);
    if (arg.find('=') == std::string::npos) {
      args.path = arg;
    } else {
      args.overrides.push_back(arg);
    }
  }
  return args;
}

// What the run directory says of the model: its size, samples and FLOPs per step, per scope.
llmprof::SessionOptions session_options(Net& net) {
  // Analytic FLOPs (multiply-add = 2): per image conv1 2*16*16*8*9, conv2 2*8*8*16*8*9,
  // head 2*256*2; a step is 3x the forward (backward = 2x).
  const double conv1 = 2.0 * kBatch * 16 * 16 * 8 * 1 * 9, conv2 = 2.0 * kBatch * 8 * 8 * 16 * 8 * 9,
               head = 2.0 * kBatch * 256 * 2;
  llmprof::SessionOptions options;
  options.model_description = "conv 1-8-16, linear 256-2";
  options.task = llmprof::TaskKind::kClassify;
  options.parameters = 0;
  for (const auto& p : net->parameters()) options.parameters += p.numel();
  options.samples_per_step = kBatch;
  options.flops_per_step = 3 * (conv1 + conv2 + head);
  options.flops_formula = "3 x (conv1 + conv2 + head) forward, multiply-add = 2";
  options.scope_forward_flops = {{"conv1", conv1}, {"conv2", conv2}, {"head", head}};
  return options;
}

// Loss and accuracy on a fresh batch, recorded with the step (eval.csv).
void evaluate(Net& net, llmprof::Step& step) {
  const auto t0 = std::chrono::steady_clock::now();
  torch::NoGradGuard no_grad;
  net->eval();
  const auto val = make_batch();
  const torch::Tensor logits = net->forward(val.first);
  const double acc = logits.argmax(1).eq(val.second).to(torch::kDouble).mean().item<double>();
  const double val_loss = torch::nn::functional::cross_entropy(logits, val.second).item<double>();
  net->train();
  const std::chrono::duration<double, std::milli> eval_ms = std::chrono::steady_clock::now() - t0;
  step.record_eval({{"val", val_loss, acc}}, eval_ms.count());
}

// The loop: each optimizer step timed phase by phase, an evaluation every 20 steps.
void train(llmprof::Session& session, Net& net, torch::optim::Adam& opt, int64_t max_steps) {
  for (int64_t i = 0; i < max_steps; ++i) {
    llmprof::Step step = session.step();
    std::pair<torch::Tensor, torch::Tensor> batch;
    torch::Tensor loss;
    {
      auto p = step.phase(llmprof::Phase::kData);
      batch = make_batch();
    }
    {
      auto p = step.phase(llmprof::Phase::kForward);
      loss = torch::nn::functional::cross_entropy(net->forward(batch.first), batch.second);
    }
    {
      auto p = step.phase(llmprof::Phase::kBackward);
      step.backward(loss);  // loss.backward() with the participants around it (DDP's all-reduce)
    }
    {
      auto p = step.phase(llmprof::Phase::kOptimizer);
      opt.step();
      opt.zero_grad();
    }
    step.end();
    step.set_loss(loss.item<double>());  // the one host read, after timing
    if (step.agree(false).stop) break;   // data-parallel: every rank decides the same
    if (step.number() % 20 == 0) evaluate(net, step);
  }
}

}  // namespace

int main(int argc, char** argv) try {
  // A config file is optional: every profile.*, energy.*, output.*, schedule.max_steps key works.
  const Args args = parse_args(argc, argv);
  llmprof::Config cfg;
  if (!args.path.empty()) cfg = llmprof::load_config(args.path, {});
  for (const std::string& o : args.overrides) llmprof::config::apply_override(cfg, o);
  if (args.nproc > 1 && std::getenv(llmprof::dist::kLaunchedEnv) == nullptr) {
    return launch_ranks(args.nproc, args.rank_args);
  }
  const llmprof::RuntimeInfo runtime = llmprof::apply_runtime(cfg);
  // A rank of a data-parallel run (null: one process): the group forms, the configs are compared.
  const std::unique_ptr<llmprof::dist::DataParallel> dp =
      llmprof::dist::DataParallel::connect(cfg, llmprof::dist::rank_env_from_environment());

  torch::manual_seed(cfg.train.seed);
  Net net;
  torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(1e-2));
  llmprof::SessionOptions options = session_options(net);
  llmprof::Config rank_cfg = cfg;
  if (dp) {
    dp->start(*net, net->parameters(), cfg);  // rank 0's weights to every rank, DDP's reducer
    // The run's top directory (rank 0 makes it); each rank's own is <top>/rank<k>.
    options.output_dir = dp->shared_top_dir(cfg, "", "custom-loop");
    rank_cfg.output.name = "rank" + std::to_string(dp->rank());
    torch::manual_seed(cfg.train.seed + dp->rank());  // each rank its own batches
  }
  llmprof::Session session(rank_cfg, options, &runtime);
  // Phase spans, gradient sync, the ranks' decision, and at the end the merged top directory.
  if (dp) session.add_participant(*dp);
  train(session, net, opt, cfg.schedule.max_steps);
  // Data-parallel: the rank's summary, a barrier, then rank 0 merges the ranks' documents at the
  // top (s.run_dir is then the top directory, s.rank_dir its own).
  const llmprof::RunSummary s = session.finish();
  if (!s.rank_dir.empty()) std::printf("rank dir:   %s\n", s.rank_dir.c_str());
  std::printf("run:        %s\nsteps:      %lld\nstep time:  %.2f ms (median)\nval loss:   %.4f\n",
              s.run_dir.c_str(), static_cast<long long>(s.steps_completed),
              s.median_step_ms.value_or(0.0), s.final_val_loss.value_or(0.0));
  return 0;
} catch (const llmprof::Error& e) {
  std::fprintf(stderr, "custom_loop: %s\n", e.what());
  return 2;
}
