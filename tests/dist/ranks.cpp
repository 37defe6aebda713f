// Multi-process ranks for the dist tests (ranks.h).
#include "ranks.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace llmprof::test {
namespace {

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::string field(const RankResult& r, const std::string& key) {
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + " ", 0) == 0) return line.substr(key.size() + 1);
  }
  return {};
}

std::string rank_scenario() {
  const char* s = std::getenv("LLMPROF_DIST_TEST_SCENARIO");
  return s ? s : "";
}

void rank_write(const std::string& key, const std::string& value) {
  std::ofstream out(std::getenv("LLMPROF_DIST_TEST_OUT"), std::ios::app);
  out << key << ' ' << value << '\n';
}

std::vector<RankResult> run_ranks(const std::string& scenario, int world, double deadline_s,
                                  const std::map<std::string, std::string>& env, int lead) {
  const int port = free_port();
  char dir_template[] = "/tmp/llmprof_dist_test_XXXXXX";
  std::string dir = mkdtemp(dir_template);
  std::vector<pid_t> pids(world);
  std::vector<RankResult> results(world);
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < world; ++r) {
    const std::string out = dir + "/rank" + std::to_string(r);
    pids[r] = fork();
    if (pids[r] == 0) {
      setenv("LLMPROF_DIST_TEST_SCENARIO", scenario.c_str(), 1);
      setenv("LLMPROF_DIST_TEST_OUT", out.c_str(), 1);
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
      setenv("MASTER_ADDR", "127.0.0.1", 1);
      setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      setenv("OMP_NUM_THREADS", "1", 1);
      for (auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
      execl("/proc/self/exe", "test_dist", "--gtest_filter=DistWorker.*", "--gtest_brief=1",
            static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  int left = world;
  while (left > 0) {
    const double now_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (int r = 0; r < world; ++r) {
      if (pids[r] <= 0) continue;
      int status = 0;
      pid_t done = waitpid(pids[r], &status, WNOHANG);
      if (done == pids[r]) {
        results[r].exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        results[r].signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        results[r].elapsed_s = now_s;
        pids[r] = 0;
        --left;
      } else if (now_s > deadline_s || (lead >= 0 && r != lead && pids[lead] == 0)) {
        kill(pids[r], SIGKILL);
        waitpid(pids[r], &status, 0);
        results[r].exit_code = -1;
        results[r].signal = SIGKILL;
        results[r].elapsed_s = now_s;
        pids[r] = 0;
        --left;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (int r = 0; r < world; ++r) {
    const std::string out = dir + "/rank" + std::to_string(r);
    results[r].out = read_all(out);
    std::remove(out.c_str());
  }
  rmdir(dir.c_str());
  return results;
}

}  // namespace llmprof::test
