// summary.json's sections that say what a run was made of and where it came from: its data, its
// model's analytic figures, the checkpoint it resumed or started from, CUDA graph capture, the
// memory plan beside what was measured (plan's struct, written here), and a data-parallel run's
// communication figures. Producers fill these structs; rundir's summary writer and reader are
// their one JSON form (docs/summary.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/rundir/comm_tables.h"
#include "llmprof/rundir/plan_reconciliation.h"

namespace llmprof::rundir {

// One bad row of a dataset file, as the dataset reader skipped it.
struct BadRowExample {
  int64_t line = 0;
  std::string reason;
};

// A dataset file read for an encoder task (mlm, classify).
struct DataFileFigures {
  std::string path, format;
  int64_t rows_read = 0, records_used = 0, bad_rows = 0;
  std::vector<BadRowExample> bad_row_examples;  // the first few
};

// lm: one text (or the generated corpus) split into token streams.
struct CorpusFigures {
  std::string source;  // the path, or "generated(seed=..., chars=...)"
  int64_t bytes = 0, train_tokens = 0, val_tokens = 0;
};

// mlm / classify: dataset files as fixed-length sequences.
struct DatasetFigures {
  DataFileFigures train_file;
  std::optional<DataFileFigures> val_file;  // nullopt: the tail of the training sequences
  std::string val_split;                    // how, when there is no val_file
  int64_t train_sequences = 0, train_tokens = 0, train_truncated = 0;
  int64_t val_sequences = 0, val_tokens = 0, val_truncated = 0;
  std::optional<int64_t> mlm_predictions_per_sequence;  // mlm
};

// summary.json "data": exactly one of the two is set.
struct DataFigures {
  std::optional<CorpusFigures> corpus;
  std::optional<DatasetFigures> datasets;
};

// summary.json "model.gqa" (llama runs): grouped-query attention against a multi-head model of the
// same width (n_kv_head = n_head), analytic, per token.
struct GqaSummary {
  std::optional<int64_t> n_head, n_kv_head, head_dim, n_layer, block_size, kv_element_bytes;
  std::optional<int64_t> kv_cache_bytes_per_token, mha_kv_cache_bytes_per_token;
  std::optional<double> attention_flops_per_token, mha_attention_flops_per_token;
  std::optional<double> kv_projection_flops_per_token, mha_kv_projection_flops_per_token;
  std::string method;  // how they are computed
};

// summary.json "model": figures of the model beyond its parameter count (llama: gqa).
struct ModelFigures {
  std::string type;  // llama
  std::optional<GqaSummary> gqa;
};

// summary.json "resumed_from": the checkpoint train.resume_from continued.
struct ResumeFigures {
  std::string path;
  int64_t step = 0;  // optimizer steps it had done
};

// summary.json "init_from": the weights model.init_from loaded (train's LoadReport).
struct InitFromFigures {
  std::string path;                     // the checkpoint directory actually read
  std::string task;                     // the task it was trained on, as checkpoint.json says
  int64_t step = 0;
  int64_t loaded = 0;                   // tensors copied
  std::vector<std::string> missing;     // in the model, not in the checkpoint (kept at init)
  std::vector<std::string> unexpected;  // in the checkpoint, not in the model (ignored)
};

// summary.json "cuda_graphs": from which step the step was a replayed graph.
struct CudaGraphFigures {
  int64_t captured_before_step = 0;
  std::string forward_ms;  // what forward_ms times from then on
};

// The rank that launched the all-reduces last most often (steps after the first layout when there
// are any), aligned clock. lag_ms: the median over collectives of its launch minus the median
// launch of the other ranks. phase: the phase (compute part: backward without its wait) in which
// its time exceeds the other ranks' most, by the median over steps of the excess (null when no
// phase of it is longer). dist::analyse_comm computes it.
struct CommStraggler {
  int64_t rank = 0;
  int64_t last_count = 0, collectives = 0;
  double lag_ms = 0;
  std::optional<profile::Phase> phase;  // the step phase where its extra time went
  double phase_excess_ms = 0;
};

// summary.json "distributed.comm": dist's communication figures over the steps after the first
// layout (all steps when there are no others); null where unknown (dist::analyse_comm).
struct CommFigures {
  int64_t steps = 0, world_size = 0;  // world_size is not written (distributed.world_size)
  std::optional<double> step_ms_median, exposed_comm_ms_median, exposed_share;  // share of step
  std::optional<double> comm_ms_median, overlap;  // overlap: sum hidden / sum comm
  std::optional<double> latency_ms_median, wait_ms_median, algbw_gb_per_s_median,
      busbw_gb_per_s_median;
  std::optional<CommStraggler> straggler;  // null for one rank or no collectives
  // drift: the largest |drift| of the ranks whose drift exceeds its uncertainty (null: none does,
  // "below resolution"); the uncertainty: the largest of the ranks'.
  std::optional<double> clock_residual_us_max, clock_drift_ns_per_s_max;
  std::optional<double> clock_drift_uncertainty_ns_per_s_max;
  std::string note;
};

// The sections a run's caller hands the Session (train::Session::context()): Summary::context.
struct RunContext {
  std::optional<DataFigures> data;
  std::optional<ModelFigures> model;
  std::optional<ResumeFigures> resumed_from;
  std::optional<InitFromFigures> init_from;
  std::optional<CudaGraphFigures> cuda_graphs;
  std::optional<MemoryReconciliation> plan;
};

}  // namespace llmprof::rundir
