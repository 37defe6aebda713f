// Step participants (llmprof/profile/participant.h, and the run directory's hooks of
// llmprof/rundir/participant.h) on the public Session: one test per hook, on a two-layer MLP
// trained by the test's own loop at profile.level=ops, so the modules/ops profiler observes the
// same phases beside them.
#include "llmprof/profile/participant.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "llmprof/llmprof.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/participant.h"
#include "llmprof/rundir/read.h"
#include "support/test_support.h"

namespace llmprof {
namespace {

using profile::Phase;

// Records every hook call as a line: "before 1", "begin forward", "backward sync", ...
class Recorder : public profile::StepParticipant {
 public:
  explicit Recorder(std::string tag, std::vector<std::string>* shared = nullptr)
      : tag_(std::move(tag)), shared_(shared) {}
  std::string_view name() const override { return tag_; }
  void before_step(int64_t step) override { log("before " + std::to_string(step)); }
  void after_step(const profile::StepRecord& r) override { log("after " + std::to_string(r.step)); }
  void on_phase_begin(Phase p) override { log("begin " + std::string(profile::phase_name(p))); }
  void on_phase_end(Phase p) override { log("end " + std::string(profile::phase_name(p))); }
  void before_backward(const at::Tensor& loss, bool sync) override {
    log(std::string("backward ") + (sync ? "sync" : "no_sync"));
    loss_seen = loss.defined();
  }
  void on_backward_error(const std::exception& e) override {
    log("backward error");
    if (diagnose) throw Error(std::string("diagnosed: ") + e.what());
  }
  profile::StepDecision after_optimizer(const profile::StepOutcome& mine) override {
    log("agree " + std::to_string(mine.step));
    outcomes.push_back(mine);
    profile::StepDecision d;
    d.stop = mine.step == stop_at;
    d.reason = tag_ + " says stop";
    return d;
  }
  std::vector<std::string> checkpoint_state(const std::string& mine) override {
    log("checkpoint");
    return gather ? std::vector<std::string>{mine, "other rank"} : std::vector<std::string>{mine};
  }

  std::vector<std::string> calls;
  std::vector<profile::StepOutcome> outcomes;
  bool loss_seen = false;  // before_backward was handed the micro-batch's loss
  int64_t stop_at = -1;
  bool diagnose = false;
  bool gather = false;

 private:
  void log(const std::string& line) {
    calls.push_back(tag_ + ": " + line);
    if (shared_ != nullptr) shared_->push_back(calls.back());
  }
  std::string tag_;
  std::vector<std::string>* shared_;
};

// Records the run directory's hooks: where it was added, the rows it added a column to (energy_j
// = step / 2), what it was told at the end. Its section: a rank of two; merging, a merged summary.
class DocRecorder : public rundir::RunParticipant {
 public:
  std::string_view name() const override { return "doc recorder"; }
  void on_added(const std::string& run_dir) override { added_to = run_dir; }
  void add_to_row(const profile::StepRecord& timing,
                  int64_t end_ns,
                  rundir::StepRow& row) override {
    rows.push_back(timing.step);
    end_before_host_end = end_before_host_end || end_ns < timing.end_ns;
    row.energy_j = 0.5 * static_cast<double>(timing.step);
  }
  rundir::RunFigures finish(const rundir::RunEnd& end) override {
    finished.push_back(end);
    if (fail) throw Error("doc recorder: the disk is full");
    rundir::RunFigures f;
    rundir::DistributedFigures& d = f.distributed.emplace();
    d.rank = 1;
    d.world_size = 2;
    d.top_dir = "top";
    return f;
  }
  std::optional<rundir::Summary> merge(const rundir::RunEnd& end) override {
    merged.push_back(end);
    summary_written = std::filesystem::exists(rundir::path(end.run_dir, rundir::kSummary));
    if (!merges) return std::nullopt;
    rundir::Summary s;
    s.run_dir = "the top";
    s.final_global_train_loss = 0.25;
    return s;
  }

  std::string added_to;
  std::vector<int64_t> rows;
  bool end_before_host_end = false;
  std::vector<rundir::RunEnd> finished, merged;
  bool summary_written = false;  // when merge was called
  bool fail = false, merges = false;
};

Config ops_config(const test::ScratchDir& dir) {
  Config c;
  c.output.dir = dir.path();
  c.output.name = "run";
  c.profile.level = config::ProfileLevel::kOps;
  c.profile.peak_flops_per_s = 1e11;
  c.profile.peak_bytes_per_s = 1e10;
  c.profile.schedule_wait = 0;  // the profiler records from the first step, beside them
  c.profile.schedule_warmup = 0;
  c.profile.schedule_active = 2;
  c.profile.warmup_steps = 0;
  c.schedule.max_steps = 3;
  c.schedule.warmup_steps = 0;
  c.energy.enabled = false;
  c.threads = 1;
  return c;
}

struct TinyMlp {
  torch::nn::Linear fc1{16, 8}, fc2{8, 4};
  torch::Tensor loss(const torch::Tensor& x, const torch::Tensor& y) {
    return torch::nn::functional::cross_entropy(fc2->forward(torch::relu(fc1->forward(x))), y);
  }
};

SessionOptions quiet() {
  SessionOptions o;
  o.quiet = true;
  return o;
}

// One step: forward, `micro` backward passes (the last syncing), optimizer; returns agree().
profile::StepDecision train_step(Session& session, TinyMlp& m, int micro = 1) {
  const torch::Tensor x = torch::randn({8, 16}), y = torch::randint(0, 4, {8});
  Step step = session.step();
  torch::Tensor loss;
  for (int i = 0; i < micro; ++i) {
    {
      auto p = step.phase(Phase::kForward);
      loss = m.loss(x, y);
    }
    auto p = step.phase(Phase::kBackward);
    step.backward(loss, /*sync=*/i == micro - 1);
  }
  { auto p = step.phase(Phase::kOptimizer); }
  step.end();
  step.set_loss(loss.item<double>());
  return step.agree(false);
}

TEST(StepParticipant, EveryParticipantSeesEveryPhaseFirstAddedOutermost) {
  test::ScratchDir dir;
  Session session(ops_config(dir), quiet());
  std::vector<std::string> both;
  Recorder a("a", &both), b("b", &both);
  session.add_participant(a);
  session.add_participant(b);
  TinyMlp m;
  train_step(session, m);
  const std::vector<std::string> expected = {
      "a: before 1",        "b: before 1",        "a: begin forward",  "b: begin forward",
      "b: end forward",     "a: end forward",     "a: begin backward", "b: begin backward",
      "a: backward sync",   "b: backward sync",   "b: end backward",   "a: end backward",
      "a: begin optimizer", "b: begin optimizer", "b: end optimizer",  "a: end optimizer",
      "a: after 1",         "b: after 1",         "a: agree 1",        "b: agree 1"};
  EXPECT_EQ(both, expected);
  // The modules/ops profiler recorded the same step beside them (its window opened at step 1).
  session.finish();
  EXPECT_FALSE(test::read_file(session.run_dir() + "/ops.csv").empty());
}

TEST(StepParticipant, BackwardIsToldWhetherTheMicroBatchSynchronises) {
  test::ScratchDir dir;
  Session session(ops_config(dir), quiet());
  Recorder r("r");
  session.add_participant(r);
  TinyMlp m;
  train_step(session, m, /*micro=*/3);
  std::vector<std::string> backward;
  for (const std::string& c : r.calls) {
    if (c.find("backward ") != std::string::npos && c.find("begin") == std::string::npos &&
        c.find("end") == std::string::npos) {
      backward.push_back(c);
    }
  }
  EXPECT_EQ(backward, (std::vector<std::string>{"r: backward no_sync", "r: backward no_sync",
                                                "r: backward sync"}));
  EXPECT_TRUE(r.loss_seen);
}

TEST(StepParticipant, ABackwardErrorIsDiagnosedByTheParticipant) {
  test::ScratchDir dir;
  Session session(ops_config(dir), quiet());
  Recorder r("r");
  r.diagnose = true;
  session.add_participant(r);
  Step step = session.step();
  const torch::Tensor no_grad = torch::ones({1});  // backward of a tensor without a graph throws
  try {
    step.backward(no_grad);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("diagnosed: "), std::string::npos) << e.what();
  }
  EXPECT_EQ(r.calls.back(), "r: backward error");
}

TEST(StepParticipant, AfterTheOptimizerAnyParticipantStopsTheRunAndAllAreAsked) {
  test::ScratchDir dir;
  Session session(ops_config(dir), quiet());
  Recorder a("a"), b("b");
  b.stop_at = 2;
  session.add_participant(a);
  session.add_participant(b);
  TinyMlp m;
  EXPECT_FALSE(train_step(session, m).stop);
  const profile::StepDecision d = train_step(session, m);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, "b says stop");
  ASSERT_EQ(a.outcomes.size(), 2u);  // asked too: a collective must run on every rank
  EXPECT_EQ(a.outcomes[1].step, 2);
  EXPECT_GT(a.outcomes[1].step_ms, 0);
  EXPECT_TRUE(std::isfinite(a.outcomes[1].loss));
}

TEST(StepParticipant, CheckpointStateIsGatheredByTheParticipantThatGathers) {
  test::ScratchDir dir;
  Session session(ops_config(dir), quiet());
  Recorder plain("plain"), gathering("gathering");
  session.add_participant(plain);
  EXPECT_EQ(session.checkpoint_state("rng"), std::vector<std::string>{"rng"});
  gathering.gather = true;
  session.add_participant(gathering);
  EXPECT_EQ(session.checkpoint_state("rng"), (std::vector<std::string>{"rng", "other rank"}));
}

// A participant standing for the other processes of a run: another process says yes at `when`
// only where it is told to, and holds `others` of every sum (its rows of an eval).
class OtherProcesses : public profile::StepParticipant {
 public:
  std::string_view name() const override { return "other processes"; }
  bool any_process(bool mine, const char* when) override {
    asked.emplace_back(when);
    return mine || std::string(when) == says_yes_at;
  }
  void sum_over_processes(std::vector<double>& sums,
                          std::vector<int64_t>& counts,
                          const char* what) override {
    summed.emplace_back(what);
    for (size_t i = 0; i < sums.size(); ++i) sums[i] += others;
    for (int64_t& c : counts) c += 1;
  }
  std::string says_yes_at = "the start";
  double others = 0.5;
  std::vector<std::string> asked, summed;
};

TEST(StepParticipant, AnyProcessAndSumsGoThroughTheParticipantThatSpansProcesses) {
  test::ScratchDir dir;
  Session session(ops_config(dir), quiet());
  // Without a participant spanning processes: this process's own answer and sums.
  EXPECT_FALSE(session.any_process(false, "the start"));
  EXPECT_TRUE(session.any_process(true, "the start"));
  std::vector<double> sums{1.0, 2.0};
  std::vector<int64_t> counts{3};
  session.sum_over_processes(sums, counts, "eval all-reduce");
  EXPECT_EQ(sums, (std::vector<double>{1.0, 2.0}));
  EXPECT_EQ(counts, std::vector<int64_t>{3});
  // With one: another process's yes decides, `when` and `what` reach it, the sums are global.
  OtherProcesses others;
  Recorder plain("plain");
  session.add_participant(plain);
  session.add_participant(others);
  EXPECT_TRUE(session.any_process(false, "the start"));
  EXPECT_FALSE(session.any_process(false, "a signal"));
  EXPECT_EQ(others.asked, (std::vector<std::string>{"the start", "a signal"}));
  session.sum_over_processes(sums, counts, "eval all-reduce");
  EXPECT_EQ(sums, (std::vector<double>{1.5, 2.5}));
  EXPECT_EQ(counts, std::vector<int64_t>{4});
  EXPECT_EQ(others.summed, std::vector<std::string>{"eval all-reduce"});
  EXPECT_TRUE(plain.calls.empty());  // the default hooks: its own answer, nothing summed
}

TEST(StepParticipant, AddingOneAfterTheFirstStepIsAnErrorNamingIt) {
  test::ScratchDir dir;
  Session session(ops_config(dir), quiet());
  TinyMlp m;
  train_step(session, m);
  Recorder late("late one");
  try {
    session.add_participant(late);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("late one"), std::string::npos) << e.what();
  }
}

SessionOptions counted() {
  SessionOptions o = quiet();
  o.tokens_per_step = 8;
  o.flops_per_step = 1e6;
  return o;
}

TEST(StepParticipant, OneOfTheRunIsToldItsDirectoryAndAddsItsColumnsToEachRow) {
  test::ScratchDir dir;
  Session session(ops_config(dir), counted());
  DocRecorder r;
  session.add_participant(r);
  EXPECT_EQ(r.added_to, session.run_dir());
  TinyMlp m;
  train_step(session, m);
  train_step(session, m);
  session.finish();
  EXPECT_EQ(r.rows, (std::vector<int64_t>{1, 2}));
  EXPECT_FALSE(r.end_before_host_end);
  const rundir::Run run = rundir::load_run(session.run_dir());
  ASSERT_EQ(run.steps.size(), 2u);
  EXPECT_EQ(run.steps[0].energy_j, 0.5);  // its column, in steps.csv
  EXPECT_EQ(run.steps[1].energy_j, 1.0);
}

TEST(StepParticipant, FinishIsToldTheRunAndItsSectionGoesIntoTheSummary) {
  test::ScratchDir dir;
  Session session(ops_config(dir), counted());
  DocRecorder r;
  session.add_participant(r);
  TinyMlp m;
  train_step(session, m);
  train_step(session, m);
  const RunSummary s = session.finish();
  ASSERT_EQ(r.finished.size(), 1u);
  const rundir::RunEnd& end = r.finished[0];
  EXPECT_EQ(end.run_dir, session.run_dir());
  EXPECT_EQ(end.status, RunStatus::kCompleted);
  EXPECT_EQ(end.steps, 2);
  EXPECT_EQ(end.tokens, 16);  // 2 x 8
  EXPECT_EQ(end.flops, 2e6);  // 2 x 1e6
  EXPECT_LT(end.start_ns, end.end_ns);
  std::vector<rundir::InputWarning> warnings;
  const auto summary =
      rundir::read_summary(rundir::path(session.run_dir(), rundir::kSummary), warnings);
  ASSERT_TRUE(summary && summary->distributed);
  EXPECT_EQ(summary->distributed->rank, 1);
  EXPECT_EQ(summary->distributed->top_dir, "top");
  // One rank of two: the typed results say so (no merge: the run is this rank's directory).
  EXPECT_EQ(s.world_size, 2);
  EXPECT_EQ(s.rank_dir, session.run_dir());
  EXPECT_EQ(s.run_dir, session.run_dir());
  EXPECT_EQ(s.rank_median_step_ms, s.median_step_ms);
}

TEST(StepParticipant, AFinishThatFailsMakesTheRunFailedItsSummaryWrittenAndNothingMerged) {
  test::ScratchDir dir;
  Session session(ops_config(dir), counted());
  DocRecorder failing, other;
  failing.fail = true;
  session.add_participant(failing);
  session.add_participant(other);
  TinyMlp m;
  train_step(session, m);
  EXPECT_THROW(session.finish(), Error);
  EXPECT_EQ(other.finished.size(), 1u);  // the others still finish
  EXPECT_TRUE(other.merged.empty());
  std::vector<rundir::InputWarning> warnings;
  const auto summary =
      rundir::read_summary(rundir::path(session.run_dir(), rundir::kSummary), warnings);
  ASSERT_TRUE(summary && summary->status);
  EXPECT_EQ(*summary->status, RunStatus::kFailed);
  EXPECT_NE(summary->message.find("the disk is full"), std::string::npos) << summary->message;
}

TEST(StepParticipant, MergeComesAfterTheSummaryAndMakesTheMergedRunTheResult) {
  test::ScratchDir dir;
  Session session(ops_config(dir), counted());
  DocRecorder r;
  r.merges = true;
  session.add_participant(r);
  TinyMlp m;
  train_step(session, m);
  const RunSummary s = session.finish();
  ASSERT_EQ(r.merged.size(), 1u);
  EXPECT_TRUE(r.summary_written);
  EXPECT_EQ(r.merged[0].status, RunStatus::kCompleted);
  EXPECT_EQ(s.run_dir, "the top");  // the merged run is the result
  EXPECT_EQ(s.final_train_loss, 0.25);
  EXPECT_EQ(s.rank_dir, session.run_dir());
}

// Names this process rank 1 of 2 (Gloo) and answers the trace's question for its collectives
// with one all-reduce in the middle of the span it is asked about.
class RankNamer : public rundir::RunParticipant {
 public:
  std::string_view name() const override { return "rank namer"; }
  std::optional<rundir::TraceDistributed> trace_distributed() const override {
    rundir::TraceDistributed d;
    d.rank = 1;
    d.world_size = 2;
    d.backend = config::DdpBackend::kGloo;
    return d;
  }
  std::vector<rundir::CollectiveSlice> collectives_between(int64_t from_ns,
                                                           int64_t to_ns) const override {
    asked.emplace_back(from_ns, to_ns);
    rundir::CollectiveSlice c;
    c.start_ns = c.issued_ns = from_ns + (to_ns - from_ns) / 4;
    c.end_ns = from_ns + (to_ns - from_ns) / 2;
    c.in_nelems = c.out_nelems = 100;
    c.group_size = 2;
    c.step = 1;
    c.bytes = 400;
    return {c};
  }
  mutable std::vector<std::pair<int64_t, int64_t>> asked;  // collectives_between's spans
};

TEST(RunParticipant, OneThatNamesTheProcessMakesTheTraceThatRanksWithItsCollectives) {
  test::ScratchDir dir;
  Config cfg = ops_config(dir);
  cfg.profile.level = config::ProfileLevel::kModules;
  Session session(cfg, quiet());
  Recorder plain("plain");
  RankNamer namer;
  session.add_participant(plain);
  session.add_participant(namer);
  TinyMlp m;
  for (int i = 0; i < 3; ++i) train_step(session, m);  // steps 1-2 recorded
  const std::string trace_path = rundir::path(session.run_dir(), rundir::kTrace);
  // Its collectives are known once the run has ended: the trace waits for finish().
  EXPECT_FALSE(std::filesystem::exists(trace_path));
  EXPECT_TRUE(namer.asked.empty());
  session.finish();
  ASSERT_EQ(namer.asked.size(), 1u);
  EXPECT_LT(namer.asked[0].first, namer.asked[0].second);  // the recorded steps' span
  const auto trace = nlohmann::json::parse(test::read_file(trace_path));
  const auto& info = trace.at("distributedInfo");
  EXPECT_EQ(info.at("rank"), 1);
  EXPECT_EQ(info.at("world_size"), 2);
  EXPECT_EQ(info.at("backend"), "gloo");
  int comms = 0;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.contains("pid")) EXPECT_EQ(e["pid"], 1) << e.dump();  // the host's events: pid = rank
    if (e.value("name", "") != "record_param_comms") continue;
    ++comms;
    EXPECT_EQ(e["args"]["Collective name"], "allreduce");
    EXPECT_EQ(e["args"]["In msg nelems"], 100);
    EXPECT_EQ(e["args"]["Group size"], 2);
  }
  EXPECT_EQ(comms, 1);
}

TEST(RunParticipant, WithoutOneThatNamesTheProcessTheTraceIsOfOneProcess) {
  test::ScratchDir dir;
  Config cfg = ops_config(dir);
  cfg.profile.level = config::ProfileLevel::kModules;
  Session session(cfg, quiet());
  DocRecorder r;  // adds to the run directory, names no process
  session.add_participant(r);
  TinyMlp m;
  for (int i = 0; i < 3; ++i) train_step(session, m);
  const std::string trace_path = rundir::path(session.run_dir(), rundir::kTrace);
  EXPECT_TRUE(std::filesystem::exists(trace_path));  // written as its window closed
  session.finish();
  const auto trace = nlohmann::json::parse(test::read_file(trace_path));
  EXPECT_EQ(trace.at("distributedInfo"), nlohmann::json::parse(R"({"rank": 0, "world_size": 1})"));
}

}  // namespace
}  // namespace llmprof
