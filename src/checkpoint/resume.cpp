// train.resume_from (llmprof/checkpoint/resume.h): the checks before a run starts, the optimizer's
// state and each rank's random state.
#include "llmprof/checkpoint/resume.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <mutex>

#include "llmprof/checkpoint/weights.h"
#include "llmprof/config/config.h"
#include "llmprof/config/schema.h"
#include "llmprof/device/random.h"
#include "llmprof/error.h"
#include "llmprof/output/run_dir.h"
#include "llmprof/rundir/checkpoint_meta.h"
#include "llmprof/rundir/files.h"

namespace llmprof::checkpoint {

namespace fs = std::filesystem;

namespace {

constexpr const char* kKey = "train.resume_from";

ConfigError resume_error(const config::Config& cfg, const std::string& what) {
  return ConfigError(fmt::format("{}: {}", kKey, what), cfg.source_file, kKey);
}

bool is_free(const std::string& key) {
  for (const std::string& f : resume_keys_free_to_change()) {
    if (key == f) return true;
    if (key.size() > f.size() && key.compare(0, f.size(), f) == 0 && key[f.size()] == '.') {
      return true;
    }
  }
  return false;
}

// Every key that shapes training and differs between the checkpoint's config.yaml and cfg.
void check_same_training(const config::Config& cfg, const std::string& dir) {
  const std::string yaml = rundir::path(dir, rundir::kConfig);
  config::Config saved;
  try {
    saved = config::load_config(yaml);
  } catch (const ConfigError& e) {
    throw resume_error(cfg, fmt::format("cannot read the checkpoint's config: {}", e.what()));
  }
  std::vector<std::string> differ;
  for (const config::KeyInfo& k : config::list_keys()) {
    if (is_free(k.path)) continue;
    const std::string theirs = config::get_value(saved, k.path);
    const std::string ours = config::get_value(cfg, k.path);
    if (theirs != ours) differ.push_back(fmt::format("{}={} (this run: {})", k.path, theirs, ours));
  }
  if (differ.empty()) return;
  throw resume_error(cfg, fmt::format("checkpoint {} was trained with {}; a resumed run keeps "
                                      "every key that shapes training (only {} may change)",
                                      dir, fmt::join(differ, ", "),
                                      fmt::join(resume_keys_free_to_change(), ", ")));
}

// rng-rank<k>.pt for k = 0 .. world_size - 1, and none beyond.
void check_rng_files(const config::Config& cfg, const std::string& dir, int world_size) {
  int saved = 0;
  while (fs::exists(rundir::path(dir, rundir::rng_state_file(saved)))) ++saved;
  if (saved == world_size) return;
  if (saved == 0) {
    throw resume_error(cfg, fmt::format("checkpoint {} has no {}: it holds weights only (use "
                                        "model.init_from to start a new run from them)",
                                        dir, rundir::rng_state_file(0)));
  }
  throw resume_error(cfg, fmt::format("checkpoint {} holds the random state of {} rank(s) "
                                      "({}..{}), this run has {}: resume with --nproc {}",
                                      dir, saved, rundir::rng_state_file(0),
                                      rundir::rng_state_file(saved - 1), world_size, saved));
}

}  // namespace

const std::vector<std::string>& resume_keys_free_to_change() {
  static const std::vector<std::string> keys = {"output",
                                                "profile",
                                                "energy",
                                                "runtime",
                                                "eval",
                                                "bench",
                                                "sweep",
                                                "ddp",
                                                "threads",
                                                "device_index",
                                                "schedule.max_steps",
                                                "train.eval_interval",
                                                "train.eval_steps",
                                                "train.save_checkpoint",
                                                "train.checkpoint_interval",
                                                "train.resume_from",
                                                "train.cuda_graphs",
                                                "model.init_from",
                                                "data.num_workers",
                                                "data.prefetch",
                                                "train.test_step_sleep_ms",
                                                "train.cuda_expandable_segments"};
  return keys;
}

ResumePoint check_resume(const config::Config& cfg, int world_size) {
  ResumePoint p;
  p.dir = resolve_checkpoint_dir(cfg.train.resume_from, cfg, kKey);
  rundir::CheckpointMeta meta;
  try {
    meta = rundir::read_checkpoint_meta(rundir::path(p.dir, rundir::kCheckpointMeta));
  } catch (const DataError& e) {
    throw resume_error(cfg, e.what());
  }
  p.step = meta.step;
  if (p.step < 1) {
    throw resume_error(cfg, fmt::format("checkpoint {}: {} records no step", p.dir,
                                        rundir::kCheckpointMeta));
  }
  if (!fs::exists(rundir::path(p.dir, rundir::kConfig))) {
    throw resume_error(cfg, fmt::format("checkpoint {} has no {}", p.dir, rundir::kConfig));
  }
  check_same_training(cfg, p.dir);
  if (!fs::exists(rundir::path(p.dir, rundir::kOptimizerState))) {
    throw resume_error(cfg, fmt::format("checkpoint {} has no {}: it holds weights only (use "
                                        "model.init_from to start a new run from them)",
                                        p.dir, rundir::kOptimizerState));
  }
  check_rng_files(cfg, p.dir, world_size);
  if (p.step >= cfg.schedule.max_steps) {
    throw resume_error(cfg, fmt::format("checkpoint {} is at step {} and schedule.max_steps is "
                                        "{}: nothing left to train; raise schedule.max_steps",
                                        p.dir, p.step, cfg.schedule.max_steps));
  }
  return p;
}

void save_optimizer_state(const std::string& dir,
                          const torch::optim::Optimizer& optimizer,
                          const LossScaleState* scaler) {
  torch::serialize::OutputArchive archive, opt;
  optimizer.save(opt);
  archive.write("optimizer", opt);
  if (scaler) {
    torch::serialize::OutputArchive s;
    scaler->save(s);
    archive.write("loss_scaler", s);
  }
  archive.save_to(rundir::path(dir, rundir::kOptimizerState));
}

void load_optimizer_state(const ResumePoint& point,
                          const config::Config& cfg,
                          torch::optim::Optimizer& optimizer,
                          LossScaleState* scaler,
                          const torch::Device& device) {
  const std::string path = rundir::path(point.dir, rundir::kOptimizerState);
  try {
    torch::serialize::InputArchive archive, opt;
    archive.load_from(path, device);
    archive.read("optimizer", opt);
    optimizer.load(opt);
    if (scaler) {
      torch::serialize::InputArchive s;
      if (!archive.try_read("loss_scaler", s)) {
        throw resume_error(cfg, path + " holds no loss scale (the run was not fp16)");
      }
      scaler->load(s);
    }
  } catch (const ConfigError&) {
    throw;
  } catch (const std::exception& e) {  // LibTorch's reader, FusedAdam's shape check
    const std::string what = e.what();
    throw resume_error(cfg, fmt::format("cannot load {}: {}", path,
                                        what.substr(0, what.find('\n'))));
  }
}

std::string rng_state_archive(const torch::Device& device) {
  torch::serialize::OutputArchive archive;
  for (device::NamedGenerator& g : device::default_generators(device)) {
    torch::Tensor state;
    {
      std::lock_guard<std::mutex> lock(g.generator.mutex());
      state = g.generator.get_state();
    }
    archive.write(std::string(g.key), state, /*is_buffer=*/true);
  }
  std::string bytes;
  archive.save_to([&](const void* data, size_t n) {
    bytes.append(static_cast<const char*>(data), n);
    return n;
  });
  return bytes;
}

RngState read_rng_state(const ResumePoint& point, const config::Config& cfg, int rank,
                        const torch::Device& device) {
  const std::string path = rundir::path(point.dir, rundir::rng_state_file(rank));
  std::vector<device::NamedGenerator> generators = device::default_generators(device);
  RngState st;
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path);
    for (const device::NamedGenerator& g : generators) {
      torch::Tensor& state = st.states.emplace_back();
      if (!archive.try_read(std::string(g.key), state, /*is_buffer=*/true)) {
        throw resume_error(cfg, fmt::format("{} holds no {} random state", path, g.label));
      }
    }
  } catch (const ConfigError&) {
    throw;
  } catch (const std::exception& e) {  // LibTorch: a damaged or foreign file
    const std::string what = e.what();
    throw resume_error(cfg, fmt::format("cannot read the random state {}: {}", path,
                                        what.substr(0, what.find('\n'))));
  }
  // A state of another size (another LibTorch, another generator) fails here, not mid-run.
  at::Generator& cpu = generators.front().generator;
  int64_t expected = 0;
  {
    std::lock_guard<std::mutex> lock(cpu.mutex());
    expected = cpu.get_state().numel();
  }
  if (st.states.front().numel() != expected) {
    throw resume_error(cfg, fmt::format("{}: the CPU random state has {} bytes, this LibTorch's "
                                        "has {}",
                                        path, st.states.front().numel(), expected));
  }
  return st;
}

void apply_rng_state(const RngState& state, const torch::Device& device) {
  std::vector<device::NamedGenerator> generators = device::default_generators(device);
  for (size_t i = 0; i < generators.size() && i < state.states.size(); ++i) {
    at::Generator& gen = generators[i].generator;
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(state.states[i]);
  }
}

}  // namespace llmprof::checkpoint
