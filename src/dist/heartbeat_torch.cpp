// Heartbeats through the rendezvous store (heartbeat.h).
#include "heartbeat.h"

#if LLMPROF_WITH_DIST

#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <future>
#include <mutex>

namespace llmprof::dist {
namespace {

using Clock = std::chrono::steady_clock;

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string key_of(int rank) { return fmt::format("llmprof/hb/{}", rank); }

// A client connection of its own to the rendezvous store (no server, no worker count).
compat::StorePtr connect(const std::string& host, int port, double timeout_s) {
  c10d::TCPStoreOptions opts;
  opts.port = static_cast<uint16_t>(port);
  opts.isServer = false;
  opts.waitWorkers = false;
  opts.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  return c10::make_intrusive<c10d::TCPStore>(host, opts);
}

// Whether nothing listens at host:port any more: a plain TCP connect refused (or the host
// unreachable) within `timeout_s`. c10d's own client retries a refused connect until its timeout
// on LibTorch 2.x (it fails at once on 1.13), which would read as a silent host; the kernel's
// answer tells a dead store host apart from a stopped one on every version.
bool refuses_connections(const std::string& host, int port, double timeout_s) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return false;
  int tried = 0, refused = 0;
  for (addrinfo* a = found; a != nullptr && refused == tried; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    ++tried;
    int err = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      err = poll(&p, 1, static_cast<int>(timeout_s * 1000)) == 1 ? 0 : ETIMEDOUT;
      socklen_t len = sizeof(err);
      if (err == 0) getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    }
    refused += err == ECONNREFUSED || err == EHOSTUNREACH || err == ENETUNREACH;
    close(fd);
  }
  freeaddrinfo(found);
  return tried > 0 && refused == tried;
}

struct Beat {
  int64_t counter = -1;  // -1: no key yet
  int64_t wall_ms = 0;
};

std::vector<Beat> read_all(c10d::Store& store, int world_size) {
  std::vector<Beat> beats(world_size);
  for (int r = 0; r < world_size; ++r) {
    std::string key = key_of(r);
    if (!store.check({key})) continue;
    auto bytes = store.get(key);
    std::string text(bytes.begin(), bytes.end());
    std::sscanf(text.c_str(), "%ld %ld", &beats[r].counter, &beats[r].wall_ms);
  }
  return beats;
}

}  // namespace

struct Heartbeat::Shared {
  std::string host;
  int port = 0;
  int rank = 0;
  int world_size = 1;
  double interval_s = 0.5;
  // The beating thread's connection, which the probe reads through too (c10d's client serialises
  // its operations). A fresh client opened while the host dies can be reset in the host's
  // listen queue, and LibTorch 1.13's client thread then throws out of its thread (std::terminate:
  // 2 of 15 runs of DistFaults.KilledStoreHostIsNamed beside 3 busy loops); a connection made at
  // set-up sees the death as an orderly close.
  compat::StorePtr store;
  std::mutex mutex;
  std::condition_variable wake;
  bool stop = false;
  std::promise<void> exited;
};

Heartbeat::Heartbeat(const std::string& host, int port, int rank, int world_size,
                     double interval_s)
    : shared_(std::make_shared<Shared>()) {
  shared_->host = host;
  shared_->port = port;
  shared_->rank = rank;
  shared_->world_size = world_size;
  shared_->interval_s = interval_s;
  shared_->store = connect(host, port, std::max(4 * interval_s, 2.0));
  // The thread holds its own references: it may outlive this object when the store hangs.
  thread_ = std::thread([shared = shared_, store = shared_->store]() {
    int64_t counter = 0;
    const auto key = key_of(shared->rank);
    const auto interval = std::chrono::duration<double>(shared->interval_s);
    try {
      std::unique_lock<std::mutex> lock(shared->mutex);
      while (!shared->stop) {
        lock.unlock();
        std::string text = fmt::format("{} {}", counter++, wall_ms());
        store->set(key, std::vector<uint8_t>(text.begin(), text.end()));
        lock.lock();
        shared->wake.wait_for(lock, interval, [&] { return shared->stop; });
      }
    } catch (const std::exception&) {
      // The store is gone: the probe reports it; nothing to beat into.
    }
    shared->exited.set_value();
  });
}

Heartbeat::~Heartbeat() {
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->stop = true;
  }
  shared_->wake.notify_all();
  auto exited = shared_->exited.get_future();
  if (exited.wait_for(std::chrono::seconds(2)) == std::future_status::ready) {
    thread_.join();
  } else {
    thread_.detach();  // blocked on a stopped store host; ends with the process
  }
}

Liveness Heartbeat::probe(double budget_s) const {
  auto shared = shared_;
  auto result = std::make_shared<std::promise<Liveness>>();
  auto answer = result->get_future();
  std::thread([shared, result, budget_s]() {
    Liveness out;
    if (refuses_connections(shared->host, shared->port, std::min(budget_s / 2, 1.0))) {
      out.kind = Liveness::Kind::kStoreGone;
      out.detail = fmt::format("connection to {}:{} refused", shared->host, shared->port);
      result->set_value(std::move(out));
      return;
    }
    try {
      const compat::StorePtr& store = shared->store;
      auto first = read_all(*store, shared->world_size);
      std::this_thread::sleep_for(std::chrono::duration<double>(2.5 * shared->interval_s));
      auto second = read_all(*store, shared->world_size);
      const int64_t now = wall_ms();
      for (int r = 0; r < shared->world_size; ++r) {
        if (r == shared->rank) continue;
        if (second[r].counter < 0 || second[r].counter == first[r].counter) {
          out.kind = Liveness::Kind::kStale;
          out.stale_ranks.push_back(r);
          out.last_seen_s.push_back(second[r].counter < 0 ? -1.0
                                                          : (now - second[r].wall_ms) / 1000.0);
        }
      }
    } catch (const std::exception& e) {
      out = Liveness{};
      out.kind = Liveness::Kind::kStoreGone;
      out.detail = compat::what_of(e);
    }
    result->set_value(std::move(out));
  }).detach();
  if (answer.wait_for(std::chrono::duration<double>(budget_s)) != std::future_status::ready) {
    Liveness silent;
    silent.kind = Liveness::Kind::kStoreSilent;
    return silent;
  }
  return answer.get();
}

}  // namespace llmprof::dist

#endif  // LLMPROF_WITH_DIST
