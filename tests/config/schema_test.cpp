// The key schema (list_keys, get_value), the cross-key checks of validate() and to_yaml,
// including the round trip to_yaml -> load_config -> identical Config.
#include "llmprof/config/schema.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "llmprof/error.h"
#include "support/config_error.h"
#include "support/test_support.h"

namespace llmprof::config {
namespace {

using test::config_error_of;

// clang-format off
// Every key of config.h, written out by hand so a field added without a schema row fails here.
const std::vector<std::string> kAllKeys = {
    "model.type", "model.n_layer", "model.n_head", "model.n_embd", "model.block_size",
    "model.vocab_size", "model.dropout", "model.bias", "model.ffn_dim", "model.max_positions",
    "model.activation", "model.attention", "model.fused_loss", "model.fused_norm",
    "model.num_labels", "model.init_from",
    "model.n_kv_head", "model.intermediate_size", "model.rope_theta", "model.rms_norm_eps",
    "model.tie_embeddings", "model.head_dim", "model.attention_bias", "model.fused_swiglu",
    "model.sliding_window",
    "model.rope_scaling.type", "model.rope_scaling.factor", "model.rope_scaling.low_freq_factor",
    "model.rope_scaling.high_freq_factor", "model.rope_scaling.original_max_position_embeddings",
    "data.path", "data.tokenizer", "data.vocab_path", "data.merges_path", "data.lower_case",
    "data.val_fraction",
    "data.num_workers", "data.prefetch", "data.generated_chars", "data.format", "data.val_path",
    "data.jsonl_fields", "data.text_column", "data.label_column", "data.max_examples",
    "data.val_max_examples", "data.mlm_probability",
    "optim.name", "optim.lr", "optim.weight_decay", "optim.beta1", "optim.beta2", "optim.eps",
    "optim.momentum", "optim.grad_clip", "optim.fused",
    "schedule.warmup_steps", "schedule.cosine", "schedule.min_lr", "schedule.max_steps",
    "train.batch_size", "train.grad_accum_steps", "train.eval_interval", "train.eval_steps",
    "train.seed", "train.precision", "train.activation_checkpointing", "train.task",
    "train.save_checkpoint", "train.checkpoint_interval", "train.cuda_graphs",
    "train.cuda_expandable_segments", "train.resume_from", "train.test_step_sleep_ms",
    "profile.level", "profile.peak_flops_per_s", "profile.peak_bytes_per_s",
    "profile.peak_busbw_bytes_per_s", "profile.warmup_steps",
    "profile.schedule_wait", "profile.schedule_warmup", "profile.schedule_active",
    "profile.schedule_repeat", "profile.record_shapes", "profile.record_view_ops", "profile.shape_interval", "profile.max_events", "profile.trace", "profile.trace_gzip",
    "profile.nvtx",
    "energy.enabled", "energy.sample_hz", "energy.cpu_tdp_w", "energy.grid_gco2_per_kwh",
    "energy.sysfs_root", "energy.nvml_library",
    "runtime.malloc_tuning", "runtime.malloc_mmap_threshold_bytes",
    "runtime.malloc_trim_threshold_bytes",
    "eval.paths", "eval.max_batches", "eval.batch_size",
    "bench.variants", "bench.batch_sizes", "bench.warmup_iters", "bench.iters",
    "bench.quant_engine", "bench.generate_tokens", "bench.prompt_tokens",
    "output.dir", "output.name",
    "ddp.bucket_mb", "ddp.first_bucket_mb", "ddp.overlap", "ddp.timeout_s", "ddp.backend",
    "threads", "device", "device_index"};
// clang-format on

// Expects every key of a and b to print the same (shortest round-trip floats make this exact).
void expect_same_config(const Config& a, const Config& b) {
  for (const KeyInfo& k : list_keys()) {
    EXPECT_EQ(get_value(a, k.path), get_value(b, k.path)) << k.path;
  }
}

// clang-format off
// A config with every key away from its default, including awkward floats and strings.
Config unusual_config() {
  Config c;
  // llama: the only type whose keys are all in use (its own keys are refused on gpt).
  c.model = {ModelType::kLlama, 3, 6, 96, 48, 1000, 0.1 + 0.2, false, 384, 96, Activation::kGeluTanh,
             Attention::kSdpa, true, true, 5,
             "runs/mlm: #1/checkpoint", 3, 200, 500000.25, 1e-6, true, 16, true, true, 4096,
             RopeScaling::kLlama3, 32.5, 2.0, 8.0, 4096};
  c.data = {"data/my corpus: v2 #1.txt", TokenizerKind::kGpt2, "enc\"oder\".json", "vocab\\bpe\ttab",
            false, 1.0 / 3, 0, 7, 12345, DataFormat::kJsonl, "val \"x\".csv", "question, answer", "review", "stars",
            100, 50, 0.2};
  c.optim = {Optimizer::kSgd, 3e-4, 0.0, 0.85, 0.999, 1e-10, 0.5, 0.0, true};
  c.schedule = {0, false, 1.5e-5, 123456};
  c.train = {3, 2, 0, 1, 0, Precision::kFp16, true, TaskKind::kLm, true, 10};
  c.train.cuda_expandable_segments = true;  // device cuda, below
  c.train.resume_from = "runs/a b: #1/checkpoint-step10";
  c.train.test_step_sleep_ms = 0.25;
  c.profile = {ProfileLevel::kOps, 1.23456789e14, 2.5e10, 3.5e9, 0, 3, 0, 7, 0, true, true, 3, 12345, false,
               true, true};
  c.energy = {false, 250, 95.5, 0.1 + 0.7, "/tmp/fake sys: #1", "/opt/nvidia/libnvidia-ml.so.1"};
  c.runtime = {false, 0, 9007199254740993};  // 2^53 + 1: an int that no double holds
  c.eval = {"wiki=a.txt,gsm8k=b.jsonl", 7, 3};
  c.bench = {"int8", "2, 4", 0, 3, QuantEngine::kQnnpack, 0, 17};
  c.output = {"", "null"};
  c.ddp = {4.5, 0.25, false, 7.5, DdpBackend::kGloo};
  c.threads = 1024;
  c.device.kind = DeviceKind::kCuda;
  c.device.index = 3;
  return c;
}
// clang-format on

TEST(ListKeys, CoversEveryConfigFieldInStructOrder) {
  std::vector<std::string> paths;
  for (const KeyInfo& k : list_keys()) paths.push_back(k.path);
  EXPECT_EQ(paths, kAllKeys);
}

TEST(ListKeys, EveryKeyHasDocTypeAndDefaultFromTheStruct) {
  const std::set<std::string> types = {"int", "float", "bool", "string", "enum"};
  const Config defaults;
  for (const KeyInfo& k : list_keys()) {
    EXPECT_FALSE(k.doc.empty()) << k.path;
    EXPECT_EQ(k.doc.find('\n'), std::string::npos) << k.path;
    EXPECT_TRUE(types.count(k.type)) << k.path << ": " << k.type;
    EXPECT_EQ(k.default_value, get_value(defaults, k.path)) << k.path;
    if (k.type == "int" || k.type == "float" || k.type == "enum") {
      EXPECT_FALSE(k.range.empty()) << k.path;
    }
  }
}

TEST(ListKeys, RangesPrintWithTheirBrackets) {
  std::vector<KeyInfo> keys = list_keys();
  auto find = [&](const std::string& path) {
    for (const KeyInfo& k : keys) {
      if (k.path == path) return k;
    }
    ADD_FAILURE() << path << " missing";
    return KeyInfo{};
  };
  EXPECT_EQ(find("train.batch_size").range, "[1, 1048576]");
  EXPECT_EQ(find("data.val_fraction").range, "(0, 1)");
  EXPECT_EQ(find("model.dropout").range, "[0, 1)");
  EXPECT_EQ(find("optim.lr").range, "(0, 10]");
  EXPECT_EQ(find("schedule.warmup_steps").range, "[0, inf)");
  EXPECT_EQ(find("optim.name").range, "sgd|adam|adamw");
  EXPECT_EQ(find("model.type").range, "gpt|distilbert|llama");
  EXPECT_EQ(find("optim.name").type, "enum");
  EXPECT_EQ(find("data.path").range, "");
}

TEST(GetValue, PrintsValuesAsYamlDoes) {
  Config c;
  EXPECT_EQ(get_value(c, "model.n_embd"), "128");
  EXPECT_EQ(get_value(c, "optim.name"), "adamw");
  EXPECT_EQ(get_value(c, "optim.lr"), "0.001");
  EXPECT_EQ(get_value(c, "optim.eps"), "1e-08");
  EXPECT_EQ(get_value(c, "model.bias"), "true");
  EXPECT_EQ(get_value(c, "data.path"), "\"\"");
  EXPECT_EQ(get_value(c, "threads"), "0");
  c.output.name = "a b";
  EXPECT_EQ(get_value(c, "output.name"), "\"a b\"");
}

TEST(GetValue, ThrowsConfigErrorWithSuggestionWhenKeyUnknown) {
  ConfigError e = config_error_of([] { get_value(Config{}, "model.n_embed"); });
  EXPECT_EQ(std::string(e.what()), "unknown key 'model.n_embed'; did you mean 'model.n_embd'?");
  EXPECT_EQ(e.key(), "model.n_embed");
  EXPECT_EQ(e.exit_code(), 2);
  EXPECT_THROW(get_value(Config{}, "source_file"), ConfigError);
}

TEST(Validate, AcceptsDefaults) { EXPECT_NO_THROW(validate(Config{})); }

TEST(Validate, RejectsHeadsThatDoNotDivideWidth) {
  Config c;
  c.model.n_head = 5;
  ConfigError e = config_error_of([&] { validate(c); });
  EXPECT_EQ(std::string(e.what()), "model.n_head: 5 does not divide model.n_embd=128");
  EXPECT_EQ(e.key(), "model.n_head");
  EXPECT_EQ(e.exit_code(), 2);
}

TEST(Validate, NamesTheSourceFileWhenTheConfigCameFromOne) {
  Config c;
  c.source_file = "configs/x.yaml";
  c.model.n_head = 3;
  ConfigError e = config_error_of([&] { validate(c); });
  EXPECT_EQ(std::string(e.what()),
            "model.n_head: 3 does not divide model.n_embd=128 (config configs/x.yaml)");
  EXPECT_EQ(e.file(), "configs/x.yaml");
}

TEST(Validate, RejectsGpt2TokenizerWithoutVocabFiles) {
  Config c;
  c.data.tokenizer = TokenizerKind::kGpt2;
  c.data.vocab_path = "encoder.json";
  ConfigError e = config_error_of([&] { validate(c); });
  EXPECT_NE(std::string(e.what()).find("data.tokenizer: gpt2 needs"), std::string::npos);
  EXPECT_NE(std::string(e.what()).find("data.merges_path is empty"), std::string::npos);
  c.data.merges_path = "vocab.bpe";
  EXPECT_NO_THROW(validate(c));
}

TEST(Validate, RejectsWarmupLongerThanRun) {
  Config c;
  c.schedule.warmup_steps = 300;
  ConfigError e = config_error_of([&] { validate(c); });
  EXPECT_EQ(std::string(e.what()), "schedule.warmup_steps: 300 exceeds schedule.max_steps=200");
  EXPECT_EQ(e.key(), "schedule.warmup_steps");
}

TEST(Validate, RejectsMinLrAbovePeakLr) {
  Config c;
  c.schedule.min_lr = 0.01;
  ConfigError e = config_error_of([&] { validate(c); });
  EXPECT_EQ(std::string(e.what()), "schedule.min_lr: 0.01 exceeds optim.lr=0.001");
}

TEST(Validate, RejectsFp16OnCpuAndAcceptsItOnCuda) {
  Config c;
  c.train.precision = Precision::kFp16;
  ConfigError e = config_error_of([&] { validate(c); });
  EXPECT_NE(std::string(e.what()).find("train.precision: fp16 needs device=cuda"),
            std::string::npos);
  EXPECT_NE(std::string(e.what()).find("on CPU use bf16"), std::string::npos);
  c.device.kind = DeviceKind::kCuda;
  EXPECT_NO_THROW(validate(c));
}

// model.fused_norm has a LibTorch path: valid on the CPU too. model.fused_swiglu is llama's.
TEST(Validate, FusedNormEverywhereFusedSwigluOnLlamaOnly) {
  Config c;
  c.model.fused_norm = true;
  EXPECT_NO_THROW(validate(c));
  c.model.fused_swiglu = true;
  ConfigError e = config_error_of([&] { validate(c); });
  EXPECT_NE(std::string(e.what()).find("model.fused_swiglu: model.type gpt has no SwiGLU"),
            std::string::npos)
      << e.what();
  c.model.type = ModelType::kLlama;
  EXPECT_NO_THROW(validate(c));
}

// model.fused_loss runs llmprof's CUDA kernels: refused on the CPU, naming both keys.
TEST(Validate, FusedLossNeedsCuda) {
  Config c;
  c.model.fused_loss = true;
  ConfigError e = config_error_of([&] { validate(c); });
  EXPECT_NE(std::string(e.what()).find("model.fused_loss: true runs llmprof's CUDA kernels and "
                                       "needs device=cuda (device=cpu)"),
            std::string::npos)
      << e.what();
  c.device.kind = DeviceKind::kCuda;
  EXPECT_NO_THROW(validate(c));
}

// train.cuda_graphs names what stands in its way, one key at a time, and passes a config that
// can be captured.
TEST(Validate, CudaGraphsNeedCudaBf16OneMicroBatchFusedAdamWAndPhases) {
  Config c;
  c.train.cuda_graphs = true;
  const auto message = [&] { return std::string(config_error_of([&] { validate(c); }).what()); };
  EXPECT_NE(message().find("train.cuda_graphs: true needs device=cuda"), std::string::npos);
  c.device.kind = DeviceKind::kCuda;
  c.train.precision = Precision::kFp16;
  EXPECT_NE(message().find("fp16's loss scaler"), std::string::npos);
  c.train.precision = Precision::kBf16;
  c.train.grad_accum_steps = 2;
  EXPECT_NE(message().find("train.grad_accum_steps=1"), std::string::npos);
  c.train.grad_accum_steps = 1;
  EXPECT_NE(message().find("optim.fused=true"), std::string::npos);
  c.optim.fused = true;
  c.profile.level = ProfileLevel::kOps;
  EXPECT_NE(message().find("profile.level=phases"), std::string::npos);
  c.profile.level = ProfileLevel::kPhases;
  EXPECT_NO_THROW(validate(c));
}

// train.cuda_expandable_segments configures CUDA's caching allocator: on the CPU it is refused,
// naming the key and the device.
TEST(Validate, CudaExpandableSegmentsNeedCuda) {
  Config c;
  c.train.cuda_expandable_segments = true;
  ConfigError e = config_error_of([&] { validate(c); });
  EXPECT_EQ(e.key(), "train.cuda_expandable_segments");
  EXPECT_NE(std::string(e.what()).find("train.cuda_expandable_segments: true configures the CUDA "
                                       "caching allocator and needs device=cuda (device=cpu)"),
            std::string::npos)
      << e.what();
  c.device.kind = DeviceKind::kCuda;
  EXPECT_NO_THROW(validate(c));
}

// A valid distilbert MLM config for the cross-key tests.
Config distilbert_config() {
  Config c;
  c.model.type = ModelType::kDistilbert;
  c.train.task = TaskKind::kMlm;
  c.data.tokenizer = TokenizerKind::kWordpiece;
  c.data.vocab_path = "vocab.txt";
  c.data.path = "wiki.train.tokens";
  return c;
}

TEST(Validate, AcceptsDistilbertWithMlmOrClassify) {
  Config c = distilbert_config();
  EXPECT_NO_THROW(validate(c));
  c.train.task = TaskKind::kClassify;
  EXPECT_NO_THROW(validate(c));
}

TEST(Validate, RejectsTaskThatDoesNotFitTheModelType) {
  Config c = distilbert_config();
  c.train.task = TaskKind::kLm;
  ConfigError e = config_error_of([&] { validate(c); });
  EXPECT_NE(std::string(e.what()).find("train.task=mlm or classify"), std::string::npos) << e.what();
  EXPECT_EQ(e.key(), "train.task");
  Config g;
  g.train.task = TaskKind::kClassify;
  e = config_error_of([&] { validate(g); });
  EXPECT_EQ(std::string(e.what()),
            "train.task: classify needs model.type=distilbert (model.type=gpt trains with "
            "train.task=lm)");
}

TEST(Validate, RejectsDistilbertWithoutWordpieceOrData) {
  Config c = distilbert_config();
  c.data.tokenizer = TokenizerKind::kChar;
  ConfigError e = config_error_of([&] { validate(c); });
  EXPECT_EQ(e.key(), "data.tokenizer");
  EXPECT_NE(std::string(e.what()).find("wordpiece"), std::string::npos);
  c = distilbert_config();
  c.data.vocab_path = "";
  EXPECT_EQ(config_error_of([&] { validate(c); }).key(), "data.tokenizer");
  c = distilbert_config();
  c.data.path = "";
  EXPECT_EQ(config_error_of([&] { validate(c); }).key(), "data.path");
}

TEST(Validate, RejectsPositionsShorterThanTheBlockAndFfnDimOnGpt) {
  Config c = distilbert_config();
  c.model.max_positions = 32;  // block_size 64
  EXPECT_EQ(std::string(config_error_of([&] { validate(c); }).what()),
            "model.max_positions: 32 is smaller than model.block_size=64");
  Config g;
  g.model.ffn_dim = 100;
  EXPECT_EQ(config_error_of([&] { validate(g); }).key(), "model.ffn_dim");
  g.model.ffn_dim = 4 * g.model.n_embd;
  EXPECT_NO_THROW(validate(g));
}

TEST(Validate, RejectsBadBenchListsNamingTheItem) {
  Config c;
  c.bench.variants = "fp32, int4";
  EXPECT_EQ(std::string(config_error_of([&] { validate(c); }).what()),
            "bench.variants: 'int4' is not one of fp32|bf16|int8|fp16");
  c = Config{};
  c.bench.batch_sizes = "1,x8";
  EXPECT_EQ(std::string(config_error_of([&] { validate(c); }).what()),
            "bench.batch_sizes: 'x8' is not a batch size in [1, 1048576]");
  c.bench.batch_sizes = " 1, 8 ,32";
  EXPECT_EQ(bench_batch_sizes(c), (std::vector<int64_t>{1, 8, 32}));
  EXPECT_EQ(split_list("question, answer,,"), (std::vector<std::string>{"question", "answer"}));
}

TEST(Validate, RejectsCheckpointIntervalWithoutSaving) {
  Config c;
  c.train.checkpoint_interval = 10;
  EXPECT_EQ(config_error_of([&] { validate(c); }).key(), "train.checkpoint_interval");
  c.train.save_checkpoint = true;
  EXPECT_NO_THROW(validate(c));
}

// An unknown enum name can no longer be set in code (the fields are enums); the name parser
// gives the message validate() gave for one.
TEST(Validate, RejectsOutOfRangeAndUnknownEnumValuesSetInCode) {
  Config c;
  c.train.batch_size = 0;
  EXPECT_EQ(std::string(config_error_of([&] { validate(c); }).what()),
            "train.batch_size: 0 is out of range [1, 1048576]");
  EXPECT_EQ(std::string(config_error_of([&] { parse_enum<Optimizer>("adamx"); }).what()),
            "optim.name: 'adamx' is not one of sgd|adam|adamw; did you mean 'adamw'?");
  c = Config{};
  c.optim.name = static_cast<Optimizer>(7);  // only a cast makes a value outside the table
  EXPECT_EQ(std::string(config_error_of([&] { validate(c); }).what()),
            "optim.name: value 7 is not one of sgd|adam|adamw");
}

TEST(Validate, RejectsHfTokenizerWithoutTokenizerJson) {
  Config c;
  c.data.tokenizer = TokenizerKind::kHf;
  ConfigError e = config_error_of([&] { validate(c); });
  EXPECT_EQ(e.key(), "data.tokenizer");
  EXPECT_NE(std::string(e.what()).find("data.vocab_path (a Hugging Face tokenizer.json)"),
            std::string::npos)
      << e.what();
  c.data.vocab_path = "tokenizer.json";
  validate(c);  // the file itself is read when the tokenizer is built
  EXPECT_EQ(name(TokenizerKind::kHf), "hf");
  EXPECT_EQ(find_enum<TokenizerKind>("hf"), TokenizerKind::kHf);
}

TEST(ToYaml, WritesEveryKeyGroupedWithDocComments) {
  std::string yaml = to_yaml(Config{});
  EXPECT_NE(yaml.find("model:\n  type: gpt"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("  n_layer: 4"), std::string::npos);
  EXPECT_NE(yaml.find("# transformer blocks\n"), std::string::npos);
  EXPECT_NE(yaml.find("\nthreads: 0"), std::string::npos);
  for (const KeyInfo& k : list_keys()) {
    bool top_level = k.path.find('.') == std::string::npos;
    std::string line_start =
        top_level ? "\n" + k.path + ": " : "\n  " + k.path.substr(k.path.find('.') + 1) + ": ";
    EXPECT_NE(yaml.find(line_start), std::string::npos) << k.path;
    EXPECT_NE(yaml.find("  # " + k.doc + "\n"), std::string::npos) << k.path;
  }
}

TEST(ToYaml, RoundTripsDefaultsThroughLoadConfig) {
  test::ScratchDir dir("config");
  test::write_file(dir.file("resolved.yaml"), to_yaml(Config{}));
  expect_same_config(load_config(dir.file("resolved.yaml")), Config{});
}

TEST(ToYaml, RoundTripsEveryKeyAwayFromItsDefault) {
  Config c = unusual_config();
  ASSERT_NO_THROW(validate(c));
  for (const KeyInfo& k : list_keys()) {
    // gpt trains only with task lm: model.type and train.task change together (distilbert tests).
    if (k.path == "model.type" || k.path == "train.task") continue;
    // cuda_graphs rules out fp16, sgd and level ops, which this config sets (Validate.CudaGraphs*).
    if (k.path == "train.cuda_graphs") continue;
    EXPECT_NE(get_value(c, k.path), k.default_value) << k.path << " left at its default";
  }
  test::ScratchDir dir("config");
  test::write_file(dir.file("resolved.yaml"), to_yaml(c));
  Config back = load_config(dir.file("resolved.yaml"));
  expect_same_config(back, c);
  EXPECT_EQ(back.model.dropout, 0.1 + 0.2);  // bit-exact, not just close
  EXPECT_EQ(back.data.val_fraction, 1.0 / 3);
  EXPECT_EQ(back.runtime.malloc_trim_threshold_bytes, 9007199254740993);
  EXPECT_EQ(back.data.path, c.data.path);
  EXPECT_EQ(back.data.vocab_path, c.data.vocab_path);
  EXPECT_EQ(back.data.merges_path, c.data.merges_path);
  EXPECT_EQ(back.output.name, "null");
  EXPECT_EQ(back.output.dir, "");
  c.source_file = back.source_file;
  EXPECT_EQ(to_yaml(back), to_yaml(c));
}

}  // namespace
}  // namespace llmprof::config
