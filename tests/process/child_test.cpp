// The one launcher of child processes, with /bin/sh children: output to a log, captured, or a
// stderr pipe; the environment and directory; its own process group signalled as a whole; a
// stopped child noticed; each end named; stop signals recorded. Every wait here is bounded by
// the child's own script.
#include "llmprof/process/child.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "llmprof/error.h"
#include "support/test_support.h"

namespace llmprof::process {
namespace {

namespace fs = std::filesystem;

ChildSpec sh(const std::string& script) {
  ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.name = "a test shell";
  return spec;
}

TEST(Spawn, WritesStdoutAndStderrToTheLogAndGivesTheExitCode) {
  const test::ScratchDir dir("llmprof-child");
  ChildSpec spec = sh("echo out; echo err >&2; exit 3");
  spec.output = Output::kLog;
  spec.log_path = dir.file("child.log");
  const Exit end = exit_of(wait_exit(spawn(spec).pid));
  EXPECT_EQ(end.kind, Exit::Kind::kExited);
  EXPECT_EQ(end.code, 3);
  EXPECT_TRUE(is_failure(end));
  EXPECT_EQ(test::read_file(spec.log_path), "out\nerr\n");
}

TEST(Spawn, SetsTheEnvironmentAndTheDirectory) {
  const test::ScratchDir dir("llmprof-child");
  ChildSpec spec = sh("echo \"$LLMPROF_CHILD_TEST:$(pwd)\"");
  spec.env = {{"LLMPROF_CHILD_TEST", "set"}};
  spec.cwd = dir.path();
  spec.output = Output::kLog;
  spec.log_path = dir.file("env.log");
  EXPECT_EQ(exit_of(wait_exit(spawn(spec).pid)).code, 0);
  EXPECT_EQ(test::read_file(spec.log_path), "set:" + fs::canonical(dir.path()).string() + "\n");
}

TEST(Spawn, AProgramThatCannotRunExits127NamingIt) {
  const Captured c = run_capture({"/nonexistent/llmprof-child"});
  const Exit end = exit_of(c.wait_status);
  EXPECT_EQ(end.code, 127);
  EXPECT_NE(c.err.find("cannot run '/nonexistent/llmprof-child'"), std::string::npos) << c.err;
}

TEST(Spawn, AnUnwritableLogIsAnIoErrorNamingTheChild) {
  ChildSpec spec = sh("true");
  spec.output = Output::kLog;
  spec.log_path = "/nonexistent/dir/child.log";
  try {
    spawn(spec);
    ADD_FAILURE() << "started without its log";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("a test shell"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(spec.log_path), std::string::npos) << e.what();
  }
}

TEST(RunCapture, KeepsStdoutAndStderrApart) {
  const Captured c = run_capture({"/bin/sh", "-c", "echo one; echo two >&2"});
  EXPECT_EQ(exit_of(c.wait_status).code, 0);
  EXPECT_EQ(c.out, "one\n");
  EXPECT_EQ(c.err, "two\n");
}

TEST(StderrPipe, PassesStderrAndDropsStdout) {
  ChildSpec spec = sh("echo dropped; echo kept >&2");
  spec.output = Output::kStderrPipe;
  const Child child = spawn(spec);
  ASSERT_GE(child.err_fd, 0);
  const int status = wait_exit(child.pid);
  std::string err;
  char buf[256];
  for (ssize_t n; (n = ::read(child.err_fd, buf, sizeof buf)) > 0;) err.append(buf, n);
  ::close(child.err_fd);
  EXPECT_EQ(exit_of(status).code, 0);
  EXPECT_EQ(err, "kept\n");
}

TEST(SendSignal, ReachesAChildLeadingItsGroupAndItsChildren) {
  ChildSpec spec = sh("sleep 30 & wait");
  spec.own_group = true;
  const Child child = spawn(spec);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  send_signal(child.pid, SIGTERM);
  const Exit end = exit_of(wait_exit(child.pid));
  EXPECT_EQ(end.kind, Exit::Kind::kKilled);
  EXPECT_EQ(end.code, SIGTERM);
  EXPECT_TRUE(is_stop_request(end));
  EXPECT_EQ(describe(end).rfind("was killed by signal 15 (", 0), 0u) << describe(end);
}

TEST(TryReap, SeesAStoppedChildOnlyWhenAsked) {
  const Child child = spawn(sh("sleep 30"));
  ::kill(child.pid, SIGSTOP);
  int status = 0;
  bool seen = false;
  for (int i = 0; i < 100 && !seen; ++i) {
    seen = try_reap(child.pid, status, /*stopped_too=*/true);
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(seen);
  EXPECT_EQ(exit_of(status).kind, Exit::Kind::kStopped);
  EXPECT_EQ(describe(exit_of(status)).rfind("was stopped by signal", 0), 0u);
  EXPECT_FALSE(try_reap(child.pid, status)) << "stopped, not ended";
  ::kill(child.pid, SIGKILL);
  EXPECT_EQ(exit_of(wait_exit(child.pid)).code, SIGKILL);
}

TEST(ExitOf, NamesEachEndAndWhatCountsAsAStopRequest) {
  EXPECT_FALSE(is_failure(exit_of(0)));
  EXPECT_EQ(describe(exit_of(2 << 8)), "exited with code 2");
  EXPECT_TRUE(is_stop_request(exit_of(130 << 8))) << "llmprof's exit code for a stop signal";
  EXPECT_FALSE(is_stop_request(exit_of(1 << 8)));
}

TEST(StopSignals, RecordsEachSignalWhenAskedToAndRestoresTheHandler) {
  {
    const StopSignals signals(/*every=*/true);
    ::raise(SIGINT);
    ::raise(SIGTERM);
    EXPECT_EQ(signals.count(), 2);
    EXPECT_EQ(signals.signal(), SIGTERM);
  }
  struct sigaction now {};
  ::sigaction(SIGINT, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_DFL);
}

TEST(FindProgram, FindsAShellOnPathAndRefusesADirectory) {
  EXPECT_FALSE(find_program("sh").empty());
  EXPECT_EQ(find_program("/bin/sh"), "/bin/sh");
  EXPECT_EQ(find_program("/"), "");
  EXPECT_EQ(find_program("llmprof-no-such-program"), "");
}

TEST(SelfExecutable, IsThisTestProgram) {
  EXPECT_NE(self_executable().find("test_process"), std::string::npos);
  EXPECT_GE(usable_cores(), 1);
}

}  // namespace
}  // namespace llmprof::process
