// train.resume_from: what a checkpoint folder holds beside its weights so that a run goes on
// from it as if it had not stopped. optimizer.pt holds the optimizer's state (LibTorch's own
// archive of Adam/AdamW/SGD, or FusedAdam's moments and step counts) and fp16's loss scale;
// rng-rank<k>.pt holds rank k's random state (the CPU generator, and on a CUDA run its device's
// generator). The step comes from checkpoint.json's "step"; the learning rate follows from it,
// and the sample stream is keyed by the global sample index, so the loader starts at batch
// step x grad_accum_steps (torch).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace llmprof::config {
struct Config;
}

namespace llmprof::checkpoint {

// fp16's loss scale and growth tracker (train's LossScaler), saved in optimizer.pt beside the
// optimizer's state so that a resumed fp16 run goes on with them.
class LossScaleState {
 public:
  virtual ~LossScaleState() = default;
  virtual void save(torch::serialize::OutputArchive& archive) const = 0;
  virtual void load(torch::serialize::InputArchive& archive) = 0;
};

struct ResumePoint {
  std::string dir;   // the checkpoint folder
  int64_t step = 0;  // optimizer steps done when it was saved: the run starts at step + 1
};

// Checks train.resume_from before anything is built. The folder must hold a checkpoint
// (model.pt, checkpoint.json, config.yaml), optimizer.pt, and rng-rank<k>.pt for exactly the
// ranks 0 .. world_size - 1; its config.yaml must agree with cfg on every key that shapes
// training (all but resume_keys_free_to_change()); its step must be below schedule.max_steps.
// Each failure is a ConfigError (exit 2) naming train.resume_from, the folder, and the key or
// file at fault.
ResumePoint check_resume(const config::Config& cfg, int world_size);

// The keys and key groups a resumed run may set differently from its checkpoint (where output
// goes, what is profiled, the run's length, checkpoints, eval cadence, threads, loader workers).
const std::vector<std::string>& resume_keys_free_to_change();

// Writes <dir>/optimizer.pt: the optimizer's state, and the loss scaler's when there is one.
void save_optimizer_state(const std::string& dir,
                          const torch::optim::Optimizer& optimizer,
                          const LossScaleState* scaler);
// Reads <point.dir>/optimizer.pt into optimizer (its tensors onto device) and scaler (when not
// null). A state that does not fit (another optimizer, other shapes) is a ConfigError naming
// train.resume_from.
void load_optimizer_state(const ResumePoint& point,
                          const config::Config& cfg,
                          torch::optim::Optimizer& optimizer,
                          LossScaleState* scaler,
                          const torch::Device& device);

// This process's random state as the bytes of an rng-rank<k>.pt: the default CPU generator's
// state, and on a CUDA device that device's default generator's.
std::string rng_state_archive(const torch::Device& device);

// A rank's saved random state: one tensor per default generator of its device, in
// device::default_generators' order (the CPU's, then a CUDA device's).
struct RngState {
  std::vector<torch::Tensor> states;
};
// Reads <point.dir>/rng-rank<rank>.pt (before the run directory exists: a damaged file is a
// ConfigError naming train.resume_from and the file).
RngState read_rng_state(const ResumePoint& point, const config::Config& cfg, int rank,
                        const torch::Device& device);
// Sets this process's generators to state: just before the first step, after everything else
// that draws from them (initialisation, the peak's calibration).
void apply_rng_state(const RngState& state, const torch::Device& device);

}  // namespace llmprof::checkpoint
