// The helpers of the data-parallel end-to-end tests: ranks started as `llmprof train` processes
// with a torchrun-style environment (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), one
// thread each, every wait bounded; their CSV and summary.json read back.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/test_support.h"

namespace llmprof::test {

// A port nobody listens on now (bound to 0, read back, released).
inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// Starts llmprof with args and extra environment variables, output to log_path.
inline int spawn_with_env(const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env, const std::string& log_path) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    ::setenv("OMP_NUM_THREADS", "1", 1);
    const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
    const std::string bin = llmprof_binary();
    std::vector<char*> argv{const_cast<char*>(bin.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

// Exit status of pid within seconds; kills it (and fails the test) when it overruns.
inline int wait_bounded(int pid, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  ADD_FAILURE() << "pid " << pid << " still running after " << seconds << " s: killed";
  return -1;
}

// The common arguments of a tiny run: dropout 0, one thread, few steps, scratch output.
inline std::vector<std::string> train_args(const std::string& out, const std::string& name,
                                    const std::vector<std::string>& sets) {
  std::vector<std::string> a{"train", "--config", kTinyConfig, "--quiet",
                             "--set", "output.dir=" + out, "--set", "output.name=" + name,
                             "--set", "model.dropout=0", "--set", "threads=1",
                             "--set", "data.num_workers=0", "--set", "ddp.timeout_s=30",
                             "--set", "energy.enabled=false"};
  for (const std::string& s : sets) {
    a.push_back("--set");
    a.push_back(s);
  }
  return a;
}

// Runs `world` ranks to completion (bounded) and returns their exit codes.
inline std::vector<int> run_ranks(int world, const std::vector<std::string>& args,
                           const std::string& log_stem,
                           const std::map<std::string, std::string>& extra_env = {}) {
  const int port = free_port();
  std::vector<int> pids;
  for (int r = 0; r < world; ++r) {
    std::map<std::string, std::string> env = extra_env;
    env["RANK"] = std::to_string(r);
    env["WORLD_SIZE"] = std::to_string(world);
    env["LOCAL_RANK"] = std::to_string(r);
    env["MASTER_ADDR"] = "127.0.0.1";
    env["MASTER_PORT"] = std::to_string(port);
    pids.push_back(spawn_with_env(args, env, log_stem + std::to_string(r) + ".log"));
  }
  std::vector<int> codes;
  for (int pid : pids) codes.push_back(wait_bounded(pid, 240));
  return codes;
}

// A CSV as rows of named fields.
inline std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
  std::istringstream in(read_file(path));
  std::string line;
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream ls(line);
    std::string f;
    while (std::getline(ls, f, ',')) fields.push_back(f);
    if (header.empty()) {
      header = fields;
      continue;
    }
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(row);
  }
  return rows;
}

inline nlohmann::json summary(const std::string& dir) {
  return nlohmann::json::parse(read_file(dir + "/summary.json"), nullptr, false);
}

}  // namespace llmprof::test
