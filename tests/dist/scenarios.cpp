// What each rank of a dist test does; findings go to rank_write() as "key value" lines.
#include "scenarios.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>
#include <torch/torch.h>

#include "llmprof/base/clock.h"
#include "llmprof/dist/grad_sync.h"
#include "llmprof/dist/process_group.h"
#include "llmprof/dist/rank_env.h"
#include "ranks.h"

namespace llmprof::test {
namespace {

using dist::GradSync;
using dist::GradSyncOptions;
using dist::ProcessGroup;

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

std::unique_ptr<ProcessGroup> make_group() {
  dist::GroupOptions options;
  options.timeout_s = 3.0;
  options.heartbeat_interval_s = 0.25;
  return ProcessGroup::create(dist::rank_env_from_environment(), options);
}

// Four Linear(128, 128) layers with tanh: weights of 64 KiB, biases of 512 B.
torch::nn::Sequential deep_model() {
  torch::nn::Sequential m;
  for (int i = 0; i < 4; ++i) {
    m->push_back(torch::nn::Linear(128, 128));
    m->push_back(torch::nn::Functional(torch::tanh));
  }
  return m;
}

std::string values_of(const std::vector<at::Tensor>& tensors) {
  std::string out;
  for (const auto& t : tensors) {
    auto flat = t.detach().to(torch::kFloat).contiguous().view({-1});
    for (int64_t i = 0; i < flat.numel(); ++i) out += fmt::format("{:.9g} ", flat[i].item<float>());
  }
  return out;
}

std::vector<at::Tensor> grads_of(torch::nn::Module& m) {
  std::vector<at::Tensor> g;
  for (auto& p : m.parameters()) g.push_back(p.grad().clone());
  return g;
}

std::string layout_of(const GradSync& sync) {
  std::string out;
  for (const auto& bucket : sync.bucket_layout()) {
    if (!out.empty()) out += "|";
    for (size_t i = 0; i < bucket.size(); ++i) out += fmt::format("{}{}", i ? "," : "", bucket[i]);
  }
  return out;
}

int64_t grad_bytes(torch::nn::Module& m) {
  int64_t bytes = 0;
  for (auto& p : m.parameters()) bytes += p.numel() * p.element_size();
  return bytes;
}

at::Tensor batch_for(int rank, int micro) {
  torch::manual_seed(1000 + 10 * rank + micro);
  return torch::randn({8, 128});
}

void broadcast() {
  auto group = make_group();
  torch::manual_seed(100 + group->rank());
  auto model = deep_model();
  rank_write("before", values_of(model->parameters()));
  group->broadcast_module(*model);
  rank_write("after", values_of(model->parameters()));
}

// Accumulates `micro` micro-steps (all but the last under no_sync) on a synchronised model and on
// an unsynchronised copy; writes both gradients and the records.
void accumulate() {
  const int micro = env_int("MICRO", 1);
  auto group = make_group();
  torch::manual_seed(7);
  auto model = deep_model();
  group->broadcast_module(*model);
  auto local = std::dynamic_pointer_cast<torch::nn::SequentialImpl>(model->clone());
  GradSyncOptions options;
  options.bucket_mb = options.first_bucket_mb = 0.0625;
  options.record = env_int("RECORD", 1) != 0;
  auto params = model->parameters();
  if (env_int("DUP", 0) != 0) params.push_back(params[2]);  // a tied weight, listed twice
  GradSync sync(*group, params, options);
  int64_t records_before_last = 0;
  for (int k = 0; k < micro; ++k) {
    const bool last = k == micro - 1;
    sync.begin_micro_step(last);
    auto x = batch_for(group->rank(), k);
    sync.backward(model->forward(x).pow(2).mean());
    local->forward(x).pow(2).mean().backward();
    if (!last) records_before_last += static_cast<int64_t>(sync.take_step_records().size());
  }
  auto records = sync.take_step_records();
  int64_t bytes = 0;
  for (const auto& r : records) bytes += r.bytes;
  rank_write("records_before_last", std::to_string(records_before_last));
  rank_write("records", std::to_string(records.size()));
  rank_write("record_bytes", std::to_string(bytes));
  rank_write("grad_bytes", std::to_string(grad_bytes(*model)));
  rank_write("local", values_of(grads_of(*local)));
  rank_write("synced", values_of(grads_of(*model)));
}

// Three synchronising steps: records per step, the layout before and after the rebuild, and
// whether buckets launched before backward's last gradient (overlap) or after it.
void steps() {
  auto group = make_group();
  torch::manual_seed(7);
  auto model = deep_model();
  group->broadcast_module(*model);
  auto params = model->parameters();
  std::vector<int64_t> ready(params.size(), 0);
  for (size_t i = 0; i < params.size(); ++i) {
    params[i].register_hook([&ready, i](at::Tensor g) {
      ready[i] = now_ns();
      return g;
    });
  }
  int64_t backward_start = 0;
  GradSyncOptions options;
  options.bucket_mb = options.first_bucket_mb = 0.0625;
  options.overlap = env_int("OVERLAP", 1) != 0;
  options.backward_start_ns = &backward_start;
  GradSync sync(*group, params, options);
  rank_write("layout0", layout_of(sync));
  rank_write("grad_bytes", std::to_string(grad_bytes(*model)));
  for (int step = 0; step < 3; ++step) {
    for (auto& p : params) {
      if (p.grad().defined()) p.grad().zero_();
    }
    sync.begin_micro_step(true);
    auto loss = model->forward(batch_for(group->rank(), step)).pow(2).mean();
    backward_start = now_ns();
    sync.backward(loss);
    const int64_t compute_end = *std::max_element(ready.begin(), ready.end());
    auto records = sync.take_step_records();
    int64_t bytes = 0, numel = 0, before = 0, ordered = 1, first = -1, timed = 1;
    for (size_t i = 0; i < records.size(); ++i) {
      const auto& r = records[i];
      bytes += r.bytes;
      numel += r.numel;
      before += r.launch_ns < compute_end;
      ordered &= r.bucket == static_cast<int32_t>(i) && r.bucket_count == (int)records.size();
      first = r.first_layout;
      timed &= r.end_ns >= r.launch_ns && r.launch_ns >= r.ready_ns &&
               r.backward_ns_at_launch == r.launch_ns - backward_start &&
               r.dtype == dist::GradDtype::kFloat32 && r.sync_step == step;
    }
    rank_write(fmt::format("step{}", step),
               fmt::format("records {} bytes {} numel {} before_end {} ordered {} first {} "
                           "timed {}", records.size(), bytes, numel, before, ordered, first,
                           timed));
    rank_write(fmt::format("layout{}", step + 1), layout_of(sync));
  }
  rank_write("rebuilt", std::to_string(sync.rebuilt()));
  rank_write("synced", values_of(grads_of(*model)));
}

void config_hash() {
  auto group = make_group();
  group->check_same_config(group->rank() == 1 ? "hash-b" : "hash-a");
  rank_write("passed", "1");
}

void eval_sums() {
  auto group = make_group();
  const int r = group->rank();
  std::vector<double> sums{1.5 + r, 0.25 * r};
  std::vector<int64_t> counts{10 + r, int64_t{1} << (40 + r)};
  group->all_reduce_sum(sums);
  group->all_reduce_sum(counts);
  auto gathered = group->all_gather({100.0 + r, -1.0 * r});
  group->barrier();
  rank_write("sums", fmt::format("{} {}", sums[0], sums[1]));
  rank_write("counts", fmt::format("{} {}", counts[0], counts[1]));
  rank_write("gathered", fmt::format("{}", fmt::join(gathered, " ")));
}

// The victim (VICTIM) is killed (FAULT=kill) or stopped (FAULT=stop) once both ranks are up;
// the survivor then tries a collective (WHERE=allreduce) or a synchronised backward (backward).
void fault() {
  const int victim = env_int("VICTIM", 1);
  const std::string kind = std::getenv("FAULT");
  const std::string where = std::getenv("WHERE") ? std::getenv("WHERE") : "allreduce";
  auto group = make_group();
  torch::manual_seed(7);
  auto model = deep_model();
  group->broadcast_module(*model);
  std::unique_ptr<GradSync> sync;
  if (where == "backward") sync = std::make_unique<GradSync>(*group, model->parameters(),
                                                             GradSyncOptions{});
  group->barrier();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // a few heartbeats each
  if (group->rank() == victim) raise(kind == "stop" ? SIGSTOP : SIGKILL);
  const auto start = std::chrono::steady_clock::now();
  try {
    if (where == "backward") {
      sync->begin_micro_step(true);
      sync->backward(model->forward(torch::randn({8, 128})).pow(2).mean());
    } else {
      std::vector<double> v{1.0};
      group->all_reduce_sum(v);
    }
  } catch (...) {
    rank_write("elapsed_s", fmt::format("{:.3f}", std::chrono::duration<double>(
                                                      std::chrono::steady_clock::now() - start)
                                                      .count()));
    throw;
  }
  rank_write("passed", "1");
}

}  // namespace

const std::map<std::string, std::function<void()>>& dist_scenarios() {
  static const std::map<std::string, std::function<void()>> all = {
      {"broadcast", broadcast}, {"accumulate", accumulate}, {"steps", steps},
      {"config_hash", config_hash}, {"eval_sums", eval_sums}, {"fault", fault}};
  return all;
}

}  // namespace llmprof::test
