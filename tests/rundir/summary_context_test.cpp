// summary.json's context sections (data, model, resumed_from, init_from, cuda_graphs, plan,
// run_dir, final_global_train_loss, distributed.comm): each in the form llmprof train wrote by
// hand before they were typed, read into the structs and written back byte for byte, with no
// unknown key; unknown sub-fields survive a rewrite; a sub-field of the wrong type names itself.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "llmprof/rundir/summary.h"
#include "rundir/doc_test.h"

namespace llmprof::rundir {
namespace {

using doc_test::expect_data_error;
using nlohmann::json;

// The keys every summary has, plus `sections` (a JSON object text), as the writer lays it out.
std::string summary_with(const std::string& sections) {
  json j = json::parse(R"({"schema_version": 1, "status": "completed", "message": null,
      "profile_level": "phases", "wall_s": 1.5, "parameters": null,
      "memory": {"peak_rss_bytes": null}, "config_notes": []})");
  j.update(json::parse(sections));
  return j.dump(2) + "\n";
}

// Parses, checks nothing was unknown, and returns the summary after checking the rewrite.
Summary round_trip(const std::string& text) {
  const Summary s = parse_summary(text, "summary.json");
  EXPECT_TRUE(s.unknown.empty()) << s.unknown.begin()->first;
  EXPECT_EQ(summary_text(s), text);
  return s;
}

TEST(SummaryContext, ClassifyDataWithoutAValidationFileRewritesByteIdentical) {
  const Summary s = round_trip(summary_with(R"({"data": {
      "train_file": {"path": "imdb.jsonl", "format": "jsonl", "rows_read": 12,
                     "records_used": 11, "bad_rows": 1,
                     "bad_row_examples": [{"line": 6, "reason": "not a JSON object"}]},
      "val_file": null, "val_split": "tail 0.1 of the sequences after a seeded shuffle",
      "train_sequences": 10, "train_tokens": 300, "train_truncated": 2,
      "val_sequences": 1, "val_tokens": 30, "val_truncated": 0}})"));
  ASSERT_TRUE(s.context.data && s.context.data->datasets);
  EXPECT_FALSE(s.context.data->corpus.has_value());
  const DatasetFigures& d = *s.context.data->datasets;
  EXPECT_EQ(d.train_file.bad_row_examples.at(0).line, 6);
  EXPECT_FALSE(d.val_file.has_value());
  EXPECT_FALSE(d.mlm_predictions_per_sequence.has_value());
  EXPECT_EQ(d.train_truncated, 2);
}

TEST(SummaryContext, LlamaModelResumeInitAndCudaGraphsRewriteByteIdentical) {
  const Summary s = round_trip(summary_with(R"({
      "model": {"type": "llama", "gqa": {"n_layer": 2, "n_head": 4, "n_kv_head": 2,
          "head_dim": 16, "block_size": 32, "kv_element_bytes": 4,
          "kv_cache_bytes_per_token": 512, "mha_kv_cache_bytes_per_token": 1024,
          "attention_flops_per_token": 65536.0, "mha_attention_flops_per_token": 81920.0,
          "kv_projection_flops_per_token": 8192.0, "mha_kv_projection_flops_per_token": 16384.0,
          "method": "analytic"}},
      "resumed_from": {"path": "/runs/a/checkpoint-step4", "step": 4},
      "init_from": {"path": "/runs/b/checkpoint", "task": "mlm", "step": 8, "loaded": 20,
                    "missing": ["head.weight"], "unexpected": []},
      "cuda_graphs": {"captured_before_step": 12, "forward_ms": "the whole replayed step"}})"));
  // 2 layers x K and V x 2 kv heads x 16 x 4 bytes = 512; the multi-head model's 4 heads: 1024.
  EXPECT_EQ(s.context.model->gqa->kv_cache_bytes_per_token, 2 * 2 * 2 * 16 * 4);
  EXPECT_EQ(s.context.model->gqa->mha_kv_cache_bytes_per_token, 2 * 2 * 4 * 16 * 4);
  EXPECT_EQ(s.context.resumed_from->step, 4);
  EXPECT_EQ(s.context.init_from->missing, std::vector<std::string>{"head.weight"});
  EXPECT_EQ(s.context.cuda_graphs->captured_before_step, 12);
}

TEST(SummaryContext, PlanInBothFormsRewritesByteIdentical) {
  const Summary planned = round_trip(summary_with(R"({"plan": {"schema_version": 1,
      "measured_source": "c10 CPU allocator reports", "measured_step": 2, "reason": null,
      "definition": "measured: ...",
      "components": {
        "parameters": {"predicted_bytes": 100, "measured_bytes": 100, "ratio": 1.0,
                       "differs": false},
        "peak": {"predicted_bytes": 90, "measured_bytes": 0, "ratio": null, "differs": true},
        "buffers": {"predicted_bytes": 8, "measured_bytes": null, "ratio": null,
                    "differs": null}},
      "peak_phase": {"predicted": "backward", "predicted_module": "loss", "measured": null},
      "unmodelled_bytes": null, "unmodelled_note": "peak RSS minus ...",
      "activations_per_block_bytes": 4096}})"));
  ASSERT_EQ(planned.context.plan->components.size(), 3u);
  EXPECT_EQ(planned.context.plan->components[0].name, "buffers");  // in the file's order
  EXPECT_FALSE(planned.context.plan->components[0].differs.has_value());
  EXPECT_EQ(planned.context.plan->peak_phase.measured, "");
  const Summary unplanned = round_trip(summary_with(
      R"({"plan": {"predicted": null, "reason": "train.cuda_graphs: not modelled"}})"));
  EXPECT_EQ(unplanned.context.plan->unplanned_reason, "train.cuda_graphs: not modelled");
  EXPECT_TRUE(unplanned.context.plan->components.empty());
}

TEST(SummaryContext, MergedDataParallelKeysAndTheCommAnalysisRewriteByteIdentical) {
  const std::string comm = R"({"steps": 3, "step_ms_median": 4.5, "exposed_comm_ms_median": 0.5,
      "exposed_share": 0.1111, "comm_ms_median": 1.0, "overlap": 0.5, "latency_ms_median": 0.25,
      "wait_ms_median": 0.125, "algbw_gb_per_s_median": null, "busbw_gb_per_s_median": null,
      "straggler": {"rank": 1, "last_launches": 3, "collectives": 3, "lag_ms": 0.75,
                    "phase": "forward", "phase_excess_ms": 0.5},
      "clock_residual_us_max": 3.0, "clock_drift_ns_per_s_max": null, "note": "steps after"})";
  const Summary s = round_trip(summary_with(
      R"({"run_dir": "/runs/dp", "final_global_train_loss": 3.25, "distributed": {
      "world_size": 2, "backend": "gloo", "launcher": "local", "overlap": false,
      "bucket_mb": 25.0, "first_bucket_mb": 1.0, "bucket_count": 1, "bucket_bytes": [4096],
      "bytes_per_step": 4096, "rank0_comm_ms_first_step": null,
      "rank0_comm_ms_per_step_median": 1.0, "comm_ms_note": "n", "times_note": "t",
      "rank_dirs": ["rank0", "rank1"], "comm": )" + comm + "}}"));
  EXPECT_EQ(s.run_dir, "/runs/dp");
  EXPECT_EQ(s.final_global_train_loss, 3.25);
  EXPECT_EQ(s.distributed->comm->straggler->phase, profile::Phase::kForward);
  EXPECT_FALSE(s.distributed->comm->busbw_gb_per_s_median.has_value());
  // A rank's records that could not be read: the analysis's error instead of its figures.
  const Summary failed = round_trip(summary_with(R"({"distributed": {"world_size": 2,
      "backend": "gloo", "launcher": "local", "overlap": false, "bucket_mb": 25.0,
      "first_bucket_mb": 1.0, "bucket_count": 0, "bucket_bytes": [], "bytes_per_step": 0,
      "rank0_comm_ms_first_step": null, "rank0_comm_ms_per_step_median": null,
      "comm_ms_note": "", "times_note": "", "rank_dirs": [],
      "comm": {"error": "rank1/comm.csv: no such file"}}})"));
  EXPECT_EQ(failed.distributed->comm_error, "rank1/comm.csv: no such file");
  EXPECT_FALSE(failed.distributed->comm.has_value());
}

TEST(SummaryContext, ADivergedRunsNullGlobalLossStaysNull) {
  const Summary s = round_trip(summary_with(R"({"final_global_train_loss": null})"));
  ASSERT_TRUE(s.final_global_train_loss.has_value());  // present, unknown: NaN, written null
  EXPECT_TRUE(std::isnan(*s.final_global_train_loss));
  EXPECT_EQ(summary_text(Summary{}).find("final_global_train_loss"), std::string::npos);
}

TEST(SummaryContext, UnknownSubFieldsAreKeptWhenRewritten) {
  const std::string text = summary_with(R"({
      "data": {"source": "tiny.txt", "bytes": 10, "train_tokens": 9, "val_tokens": 1,
               "load_ms": 2.5},
      "plan": {"predicted": null, "reason": "r", "hint": "x"},
      "init_from": {"path": "p", "task": "lm", "step": 1, "loaded": 2, "missing": [],
                    "unexpected": [], "dtype": "bf16"}})");
  const Summary s = parse_summary(text, "summary.json");
  EXPECT_EQ(s.unknown.size(), 3u);
  EXPECT_EQ(s.unknown.at("/data/load_ms"), "2.5");
  EXPECT_EQ(s.unknown.at("/init_from/dtype"), "\"bf16\"");
  EXPECT_EQ(summary_text(s), text);
  const std::string rows = summary_with(R"({"data": {"train_file": {"path": "a", "format":
      "text", "rows_read": 1, "records_used": 1, "bad_rows": 1, "bad_row_examples":
      [{"line": 1, "reason": "r", "column": 4}]}, "val_file": null, "val_split": "tail",
      "train_sequences": 1, "train_tokens": 1, "train_truncated": 0, "val_sequences": 0,
      "val_tokens": 0, "val_truncated": 0}})");
  const Summary r = parse_summary(rows, "summary.json");
  EXPECT_EQ(r.unknown.at("/data/train_file/bad_row_examples/0/column"), "4");
  EXPECT_EQ(summary_text(r), rows);
}

TEST(SummaryContext, ASubFieldOfTheWrongTypeIsAnErrorNamingIt) {
  expect_data_error(
      [] {
        parse_summary(summary_with(R"({"plan": {"components": {"peak":
            {"predicted_bytes": 1, "measured_bytes": "many"}}}})"), "f/summary.json");
      },
      "f/summary.json: plan.components.peak.measured_bytes is \"many\", not an integer");
  expect_data_error(
      [] { parse_summary(summary_with(R"({"data": "tiny"})"), "g.json"); },
      "g.json: data is \"tiny\", not an object");
  expect_data_error(
      [] {
        parse_summary(summary_with(R"({"distributed": {"comm": {"straggler":
            {"phase": "idle"}}}})"), "h.json");
      },
      "h.json: distributed.comm.straggler.phase is \"idle\", not data, forward, backward or "
      "optimizer");
}

}  // namespace
}  // namespace llmprof::rundir
