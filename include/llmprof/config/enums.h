// The closed sets of config values as types. Each enum has one name table (EnumTable) that the
// loader parses files and --set with, that config.yaml is printed from, and that output files
// (summary.json, CSV columns, logs) write names through; past the config boundary code compares
// enums, never names. Values index the tables: keep them dense and in table order.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace llmprof::config {

// The name table of an enum: the config key it is read from and its names, indexed by value.
// The order of names is the order `llmprof config keys` prints the choices in.
template <typename E>
struct EnumTable {};

namespace detail {
// The names as an array of string_views (CTAD alone would make const char*).
template <typename... Names>
constexpr std::array<std::string_view, sizeof...(Names)> name_array(Names... names) {
  return {names...};
}
}  // namespace detail

// Specialises EnumTable for Enum: its config key, then its names in value order.
#define LLMPROF_ENUM_NAMES(Enum, config_key, ...)                  \
  template <>                                                      \
  struct EnumTable<Enum> {                                         \
    static constexpr std::string_view key = config_key;            \
    static constexpr auto names = detail::name_array(__VA_ARGS__); \
  }

enum class ModelType : int { kGpt = 0, kDistilbert = 1, kLlama = 2 };
LLMPROF_ENUM_NAMES(ModelType, "model.type", "gpt", "distilbert", "llama");

// llama: the rotary embedding's frequency scaling (Hugging Face's rope_scaling). none: the plain
// inv_freq = 1 / theta^(2i/d); llama3: Llama 3.1's band-wise rescaling of inv_freq.
enum class RopeScaling : int { kNone = 0, kLlama3 = 1 };
LLMPROF_ENUM_NAMES(RopeScaling, "model.rope_scaling.type", "none", "llama3");

// The GELU of the gpt MLP: exact (erf, nanoGPT's nn.GELU) or tanh (GPT-2's gelu_new).
enum class Activation : int { kGelu = 0, kGeluTanh = 1 };
LLMPROF_ENUM_NAMES(Activation, "model.activation", "gelu", "gelu_tanh");

// The gpt attention core: llmprof's own (scores, mask, softmax, weighted sum: each op and scope
// visible) or LibTorch's fused scaled_dot_product_attention (flash attention on CUDA with
// LibTorch 2.x, nanoGPT's choice; 1.13's composite on the CPU).
enum class Attention : int { kManual = 0, kSdpa = 1 };
LLMPROF_ENUM_NAMES(Attention, "model.attention", "manual", "sdpa");

// kHf: a Hugging Face tokenizer.json (data.vocab_path), BPE with its pre-tokenizers.
enum class TokenizerKind : int { kChar = 0, kGpt2 = 1, kWordpiece = 2, kHf = 3 };
LLMPROF_ENUM_NAMES(TokenizerKind, "data.tokenizer", "char", "gpt2", "wordpiece", "hf");

// kAuto picks by file extension; a dataset read back always holds one of the others.
enum class DataFormat : int { kAuto = 0, kText = 1, kJsonl = 2, kCsv = 3, kTsv = 4 };
LLMPROF_ENUM_NAMES(DataFormat, "data.format", "auto", "text", "jsonl", "csv", "tsv");

enum class Optimizer : int { kSgd = 0, kAdam = 1, kAdamw = 2 };
LLMPROF_ENUM_NAMES(Optimizer, "optim.name", "sgd", "adam", "adamw");

enum class Precision : int { kFp32 = 0, kBf16 = 1, kFp16 = 2 };
LLMPROF_ENUM_NAMES(Precision, "train.precision", "fp32", "bf16", "fp16");

enum class TaskKind : int { kLm = 0, kMlm = 1, kClassify = 2 };
LLMPROF_ENUM_NAMES(TaskKind, "train.task", "lm", "mlm", "classify");

// Profiling depth; ordered, each level includes the previous (profile::Level is this type).
enum class ProfileLevel : int { kOff = 0, kPhases = 1, kModules = 2, kOps = 3 };
LLMPROF_ENUM_NAMES(ProfileLevel, "profile.level", "off", "phases", "modules", "ops");

// The int8 engine, as torch.backends.quantized.engine spells it.
enum class QuantEngine : int { kOnednn = 0, kQnnpack = 1, kFbgemm = 2, kX86 = 3 };
LLMPROF_ENUM_NAMES(QuantEngine, "bench.quant_engine", "onednn", "qnnpack", "fbgemm", "x86");

// Data-parallel communication backend: auto = gloo on CPU, nccl on CUDA.
enum class DdpBackend : int { kAuto = 0, kGloo = 1, kNccl = 2 };
LLMPROF_ENUM_NAMES(DdpBackend, "ddp.backend", "auto", "gloo", "nccl");

// The kind of device a run computes on; Device pairs it with the ordinal.
enum class DeviceKind : int { kCpu = 0, kCuda = 1 };
LLMPROF_ENUM_NAMES(DeviceKind, "device", "cpu", "cuda");

// Where a run computes: the CPU, or the CUDA device `index`. Parsed once at the config boundary
// from `device` (cpu | cuda | cuda:N, torch's spelling) and `device_index`; past it only the
// device concern (llmprof/device/) branches on the kind.
struct Device {
  DeviceKind kind = DeviceKind::kCpu;
  int64_t index = 0;  // cuda: the device ordinal; `device: cuda:N` sets kind and index

  bool is_cuda() const { return kind == DeviceKind::kCuda; }
  bool operator==(const Device& o) const { return kind == o.kind && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

// One item of the bench.variants list (a list key: config::bench_variants parses it).
enum class BenchVariant : int { kFp32 = 0, kBf16 = 1, kInt8 = 2, kFp16 = 3 };
LLMPROF_ENUM_NAMES(BenchVariant, "bench.variants", "fp32", "bf16", "int8", "fp16");

// Where `llmprof sweep` runs its points: here, as child processes, or as one Slurm job array.
// Read from the sweep section (sweep.launcher) or --launcher; not a key of a run's config.
enum class Launcher : int { kLocal = 0, kSlurm = 1 };
LLMPROF_ENUM_NAMES(Launcher, "sweep.launcher", "local", "slurm");

// How a run ended, as summary.json's "status" and sweep.csv name it (not a config key: the key
// of the table is the field its names are read from). The readers of run directories parse the
// name once (rundir::read_summary); an unknown name there is a DataError naming file and value.
enum class RunStatus : int { kCompleted = 0, kDiverged = 1, kFailed = 2, kInterrupted = 3 };
LLMPROF_ENUM_NAMES(RunStatus, "status", "completed", "diverged", "failed", "interrupted");

// A sweep point's state, as sweep.csv, sweep.json and runs/<id>.point.json name it: pending and
// running until its run ends, then the run's RunStatus (same names); skipped is what
// `llmprof sweep run-point` answers for a point it did not run (never recorded).
enum class PointStatus : int {
  kPending = 0,
  kRunning = 1,
  kSkipped = 2,
  kCompleted = 3,
  kDiverged = 4,
  kFailed = 5,
  kInterrupted = 6
};
LLMPROF_ENUM_NAMES(PointStatus, "status", "pending", "running", "skipped", "completed", "diverged",
                   "failed", "interrupted");

// A whole sweep's state, sweep.json's (and plan.json's) "status".
enum class SweepState : int {
  kRunning = 0,
  kSubmitted = 1,
  kSubmitFailed = 2,
  kFinished = 3,
  kInterrupted = 4
};
LLMPROF_ENUM_NAMES(SweepState, "status", "running", "submitted", "submit_failed", "finished",
                   "interrupted");

// LLMPROF_ENUM_NAMES stays defined: the enums that other concerns write to files (an A/B
// verdict, an energy channel) get their name table with it, inside namespace llmprof::config.

// The name of a value ("bf16"), as config files and output files spell it; "?" for a value
// outside the table (only a cast can make one).
template <typename E, typename Table = EnumTable<E>, size_t N = Table::names.size()>
constexpr std::string_view name(E value) {
  const auto i = static_cast<size_t>(value);
  return i < N ? Table::names[i] : std::string_view("?");
}

// The value called `text`, or nullopt. For names read back from files, where an unknown one is
// reported by the reader; config input goes through parse_enum.
template <typename E>
constexpr std::optional<E> find_enum(std::string_view text) {
  for (size_t i = 0; i < EnumTable<E>::names.size(); ++i) {
    if (EnumTable<E>::names[i] == text) return static_cast<E>(i);
  }
  return std::nullopt;
}

// The point status of a run that ended with status: the same name.
constexpr PointStatus point_status(RunStatus status) {
  switch (status) {
    case RunStatus::kCompleted:
      return PointStatus::kCompleted;
    case RunStatus::kDiverged:
      return PointStatus::kDiverged;
    case RunStatus::kFailed:
      return PointStatus::kFailed;
    case RunStatus::kInterrupted:
      return PointStatus::kInterrupted;
  }
  return PointStatus::kFailed;
}

namespace detail {
// Throws the loader's ConfigError for a name not in names: "<key>: '<text>' is not one of a|b|c",
// with "; did you mean 'x'?" when one is close.
[[noreturn]] void throw_unknown_name(std::string_view key,
                                     std::string_view text,
                                     const std::string_view* names,
                                     size_t count);
}  // namespace detail

// The value called `text`; anything else is a ConfigError (exit 2) naming the key, the value and
// the allowed names, worded as the loader words it.
template <typename E>
E parse_enum(std::string_view text) {
  if (std::optional<E> value = find_enum<E>(text)) return *value;
  detail::throw_unknown_name(EnumTable<E>::key, text, EnumTable<E>::names.data(),
                             EnumTable<E>::names.size());
}

}  // namespace llmprof::config
