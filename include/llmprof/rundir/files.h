// The names of every file llmprof writes, and their schema versions: one list, used by the
// writers and the readers alike (docs/ARCHITECTURE.md, "The run directory"). Columns and units
// of each table are in rundir/tables.h.
#pragma once

#include <string>
#include <string_view>

namespace llmprof::rundir {

// A training run (llmprof train, or a user's loop through llmprof::Session).
inline constexpr std::string_view kConfig = "config.yaml";    // the resolved config
inline constexpr std::string_view kEnv = "env.json";          // host, build, threads, peak
inline constexpr std::string_view kSummary = "summary.json";  // written whole at the end
inline constexpr std::string_view kLog = "log.txt";
inline constexpr std::string_view kSteps = "steps.csv";  // one row per step, flushed as it ends
inline constexpr std::string_view kEval = "eval.csv";    // one row per split per eval
inline constexpr std::string_view kModules = "modules.csv";  // profile.level >= modules
inline constexpr std::string_view kActivations = "activations.csv";
inline constexpr std::string_view kMemory = "memory.csv";
inline constexpr std::string_view kOps = "ops.csv";        // profile.level = ops
inline constexpr std::string_view kTrace = "trace.json";   // Chrome trace event format
inline constexpr std::string_view kTraceGz = "trace.json.gz";  // the same, profile.trace_gzip
inline constexpr std::string_view kPower = "power.csv";    // energy samples
inline constexpr std::string_view kKernels = "kernels.csv";  // GPU kernels (CUDA runs)
// Data-parallel runs: per bucket all-reduce records, in each rank<k>/ and merged at the top.
inline constexpr std::string_view kComm = "comm.csv";
inline constexpr std::string_view kPhaseSpans = "phases.csv";  // per rank: timed phase spans
// Written by rank 0 at the top after the run (rundir/comm_tables.h): the clocks against rank 0's,
// every collective on rank 0's clock, and each step's temporal breakdown per rank.
inline constexpr std::string_view kClocks = "clocks.csv";
inline constexpr std::string_view kCollectives = "collectives.csv";
inline constexpr std::string_view kCommSteps = "comm_steps.csv";
inline constexpr std::string_view kRankDirPrefix = "rank";  // rank<k>/: one rank's run directory
inline constexpr std::string_view kCheckpoint = "checkpoint";  // directory: weights + config
inline constexpr std::string_view kCheckpointMeta = "checkpoint.json";

// What train.resume_from needs beside a checkpoint's weights: the optimizer's state (moments,
// step counts; fp16's loss scale) and each rank's random state (CPU generator, and the CUDA
// generator of its device on a CUDA run), rng-rank<k>.pt for rank k.
inline constexpr std::string_view kOptimizerState = "optimizer.pt";
inline constexpr std::string_view kRngStatePrefix = "rng-rank";
inline constexpr std::string_view kRngStateSuffix = ".pt";

// llmprof eval and llmprof bench directories.
inline constexpr std::string_view kEvalSets = "eval_sets.csv";
inline constexpr std::string_view kEvalJson = "eval.json";
inline constexpr std::string_view kBench = "bench.csv";
inline constexpr std::string_view kBenchQuality = "bench_quality.csv";
inline constexpr std::string_view kBenchJson = "bench.json";

// llmprof peak --comm --output DIR: the all-reduce bus bandwidth per message size (comm_peak.h).
inline constexpr std::string_view kCommPeak = "comm_peak.csv";

// A sweep directory: sweep.csv/sweep.json, and one run directory per point under runs/.
inline constexpr std::string_view kSweepCsv = "sweep.csv";
inline constexpr std::string_view kSweepJson = "sweep.json";
inline constexpr std::string_view kSweepRuns = "runs";
// What every launcher and `llmprof sweep run-point` read the sweep from: context, points, --sets.
inline constexpr std::string_view kSweepPlan = "plan.json";
// runs/<point id> + this: the point's record (status, host, Slurm job and task, times).
inline constexpr std::string_view kPointRecordSuffix = ".point.json";
// The Slurm launcher's folder: its sbatch scripts, submissions.csv and logs/%A_%a.out.
inline constexpr std::string_view kSweepSlurm = "slurm";

// ---- Names composed per point, per step or inside a checkpoint (one block, kept apart from the
// documents above so additions on either side merge).
// A run directory's train output beside it: runs/<id>.log for a sweep point, <rep>.log for an
// A/B repetition.
inline constexpr std::string_view kRunLogSuffix = ".log";
// runs/<id> + this: held while a run-point runs the point.
inline constexpr std::string_view kPointLockSuffix = ".lock";
// In the sweep directory: held by a launcher while it submits or runs (one launcher at a time),
// and while sweep.csv and sweep.json are rebuilt from the point records.
inline constexpr std::string_view kSweepLock = ".lock";
inline constexpr std::string_view kSweepTablesLock = ".tables.lock";
// slurm/submissions.csv: one row per sbatch submission; slurm/logs/: the array tasks' output.
inline constexpr std::string_view kSlurmSubmissions = "submissions.csv";
inline constexpr std::string_view kSlurmLogs = "logs";
// In checkpoint/ (and checkpoint-step<N>/): the weights, the tokenizer's files, and the Hugging
// Face config.json the run started from, when it started from one.
inline constexpr std::string_view kCheckpointWeights = "model.pt";
inline constexpr std::string_view kCheckpointTokenizerDir = "tokenizer";
inline constexpr std::string_view kCheckpointHfConfig = "hf_config.json";
// <run>/checkpoint-step<N>: the checkpoint written at step N (train.checkpoint_interval).
inline constexpr std::string_view kCheckpointStepPrefix = "checkpoint-step";

// The log beside a run directory: run_dir + ".log" (a sweep point's runs/<id>.log).
inline std::string run_log_path(std::string_view run_dir) {
  return std::string(run_dir) + std::string(kRunLogSuffix);
}

// <run_dir>/checkpoint-step<step>.
inline std::string checkpoint_step_dir(std::string_view run_dir, long long step) {
  return std::string(run_dir) + "/" + std::string(kCheckpointStepPrefix) + std::to_string(step);
}

// Schema versions, one per document: bumped when a key changes meaning or goes away (new keys
// do not bump it). Each document's reader refuses a newer one.
inline constexpr int kSummarySchemaVersion = 1;
inline constexpr int kSummaryPlanSchemaVersion = 1;  // summary.json's plan section
inline constexpr int kSweepSchemaVersion = 1;  // plan.json, <id>.point.json, sweep.json
inline constexpr int kEnvSchemaVersion = 1;
inline constexpr int kCheckpointSchemaVersion = 1;
inline constexpr int kEvalSchemaVersion = 1;
inline constexpr int kBenchSchemaVersion = 1;
inline constexpr int kTraceSchemaVersion = 2;  // trace.json's otherData.schema_version
inline constexpr int kCheckSchemaVersion = 1;  // llmprof check's JSON verdict

// dir + "/" + file.
inline std::string path(std::string_view dir, std::string_view file) {
  std::string p(dir);
  if (!p.empty() && p.back() != '/') p += '/';
  p += file;
  return p;
}

// rng-rank<rank>.pt.
inline std::string rng_state_file(int rank) {
  return std::string(kRngStatePrefix) + std::to_string(rank) + std::string(kRngStateSuffix);
}

// ---- What `llmprof report` and `llmprof plan` write (one block, kept apart so additions on either
// side merge).
// In a run directory: `llmprof report --try`'s A/B of each suggested --set (rundir::TriedDoc).
inline constexpr std::string_view kTried = "tried.json";
inline constexpr int kTriedSchemaVersion = 1;
inline constexpr int kReportSchemaVersion = 1;  // llmprof report --format json (ReportDoc)
inline constexpr int kPlanSchemaVersion = 1;    // llmprof plan --format json

// ---- What `llmprof tune` writes into its tune directory (rundir::TuneDoc).
inline constexpr std::string_view kTune = "tune.json";
inline constexpr std::string_view kTunedConfig = "tuned.yaml";
inline constexpr std::string_view kTuneTable = "tune.md";
inline constexpr std::string_view kTuneHtml = "tune.html";
inline constexpr std::string_view kTuneChart = "tune.svg";
inline constexpr int kTuneSchemaVersion = 1;

}  // namespace llmprof::rundir
