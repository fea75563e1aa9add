// Dropping the connections that hold an actor system's teardown (actors/bounded_teardown.hpp),
// on loopback: a peer that never reads stands in for one behind a dead link, since the bytes
// sent to it stay queued either way.
#include "catch_torch.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "actors/bounded_teardown.hpp"

namespace {

// A listener, a client connected to it and the accepted end, closed on exit.
struct TeardownLoopback {
  int listener = -1;
  int client = -1;
  int server = -1;

  TeardownLoopback() {
    listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(listener, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
    REQUIRE(listen(listener, 1) == 0);
    socklen_t size = sizeof at;
    REQUIRE(getsockname(listener, reinterpret_cast<sockaddr*>(&at), &size) == 0);
    client = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(connect(client, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
    server = accept(listener, nullptr, nullptr);
    REQUIRE(server >= 0);
  }
  ~TeardownLoopback() {
    for (int fd : {listener, client, server}) close(fd);
  }

  // Writes from the client until its send queue is full: the server never reads.
  void fill_client_queue() const {
    REQUIRE(fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK) == 0);
    const std::vector<char> chunk(1 << 16, 'x');
    while (send(client, chunk.data(), chunk.size(), MSG_NOSIGNAL) > 0) {
    }
    REQUIRE((errno == EAGAIN || errno == EWOULDBLOCK));
  }
};

bool still_connected(int fd) {
  sockaddr_in peer{};
  socklen_t size = sizeof peer;
  return getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &size) == 0;
}

}  // namespace

// Dropping a connection resets its peer too (on loopback at once, as a rule), so how many
// descriptors a pass of every connection counts may vary; what is left connected may not.
TEST_CASE("bounded teardown: only connections with unacknowledged bytes are stalled", "[teardown]") {
  TeardownLoopback stuck;
  TeardownLoopback idle;
  CHECK(drift::actors::abort_tcp_connections(true) == 0);
  stuck.fill_client_queue();
  CHECK(drift::actors::abort_tcp_connections(true) == 1);
  CHECK_FALSE(still_connected(stuck.client));
  CHECK(still_connected(idle.client));
  CHECK(still_connected(idle.server));
  CHECK(drift::actors::abort_tcp_connections(false) >= 1);
  CHECK_FALSE(still_connected(idle.client));
  CHECK_FALSE(still_connected(idle.server));
  // Still listening, with nobody waiting: a non-blocking accept has nothing to take.
  for (int listener : {stuck.listener, idle.listener}) {
    REQUIRE(fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK) == 0);
    CHECK(accept(listener, nullptr, nullptr) == -1);
    CHECK((errno == EAGAIN || errno == EWOULDBLOCK));
  }
}

TEST_CASE("bounded teardown: the watch acts after its grace, and not once the teardown ended", "[teardown]") {
  TeardownLoopback stuck;
  TeardownLoopback idle;
  stuck.fill_client_queue();
  std::vector<std::string> said;
  {
    drift::actors::BoundedTeardown quick(30.0, [&](const std::string& text) { said.push_back(text); });
  }
  CHECK(said.empty());
  CHECK(still_connected(stuck.client));
  {
    drift::actors::BoundedTeardown bound(0.05, [&](const std::string& text) { said.push_back(text); });
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (still_connected(idle.client) && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(said.size() == 2);
  CHECK(said[0] ==
        "closing the network took more than 0.05 s: dropped 1 connection(s) whose peer stopped acknowledging");
  CHECK(said[1].rfind("closing the network took more than 0.05 s: dropped ", 0) == 0);
  CHECK_FALSE(still_connected(stuck.client));
  CHECK_FALSE(still_connected(idle.server));
}
