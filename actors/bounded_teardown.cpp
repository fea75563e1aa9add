#include "actors/bounded_teardown.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>

#ifdef __linux__
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#endif

namespace drift::actors {
namespace {

#ifdef __linux__
// Whether the descriptor is a TCP socket; if so, fills its state.
bool tcp_info_of(int fd, tcp_info& info) {
  int type = 0;
  int domain = 0;
  socklen_t size = sizeof type;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size) != 0 || type != SOCK_STREAM) return false;
  size = sizeof domain;
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &size) != 0 || (domain != AF_INET && domain != AF_INET6))
    return false;
  size = sizeof info;
  return getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) == 0;
}

bool stalled(int fd, const tcp_info& info) {
  int unsent = 0;
  if (ioctl(fd, SIOCOUTQ, &unsent) != 0) unsent = 0;
  return info.tcpi_unacked > 0 || unsent > 0;
}
#endif

}  // namespace

std::size_t abort_tcp_connections(bool only_stalled) {
  std::size_t aborted = 0;
#ifdef __linux__
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
    int fd = -1;
    try {
      fd = std::stoi(entry.path().filename().string());
    } catch (const std::exception&) {
      continue;
    }
    tcp_info info{};
    if (!tcp_info_of(fd, info) || info.tcpi_state == TCP_LISTEN || info.tcpi_state == TCP_CLOSE) continue;
    if (only_stalled && !stalled(fd, info)) continue;
    // connect() to AF_UNSPEC drops the connection at once (a reset, the send queue discarded)
    // and leaves the descriptor open: its owner sees an error on its next poll and closes it.
    sockaddr unspecified{};
    unspecified.sa_family = AF_UNSPEC;
    if (::connect(fd, &unspecified, sizeof unspecified) == 0) ++aborted;
  }
#else
  (void)only_stalled;
#endif
  return aborted;
}

BoundedTeardown::BoundedTeardown(double grace_s, std::function<void(const std::string&)> log)
    : log_(std::move(log)), watcher_([this, grace_s] { watch(grace_s); }) {}

BoundedTeardown::~BoundedTeardown() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  done_changed_.notify_all();
  watcher_.join();
}

void BoundedTeardown::watch(double grace_s) {
  const auto grace = std::chrono::duration<double>(grace_s);
  std::unique_lock lock(mutex_);
  for (const bool only_stalled : {true, false}) {
    if (done_changed_.wait_for(lock, grace, [this] { return done_; })) return;
    const auto aborted = abort_tcp_connections(only_stalled);
    if (aborted == 0 || !log_) continue;
    char grace_text[32];
    std::snprintf(grace_text, sizeof grace_text, "%g", grace_s);
    log_(std::string("closing the network took more than ") + grace_text + " s: dropped " + std::to_string(aborted) +
         (only_stalled ? " connection(s) whose peer stopped acknowledging" : " connection(s)"));
  }
  done_changed_.wait(lock, [this] { return done_; });
}

}  // namespace drift::actors
