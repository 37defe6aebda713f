// Step participants (llmprof/profile/participant.h) on the public Session: one test per hook, on
// a two-layer MLP trained by the test's own loop at profile.level=ops, so the modules/ops
// profiler observes the same phases beside them.
#include "llmprof/profile/participant.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "llmprof/llmprof.h"
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

}  // namespace
}  // namespace llmprof
