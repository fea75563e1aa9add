#pragma once
// Where a coordinator listens and a worker connects: "HOST:PORT", "[IPv6]:PORT" or a bare
// "PORT", which means 127.0.0.1 (drift never listens beyond loopback unless told to).
#include <cstdint>
#include <string>

namespace drift {

struct Endpoint {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string text() const;  // "127.0.0.1:4242", "[::1]:4242"
};

// Throws UserError naming `flag` for a bad host or port. Port 0 (any free port, reported
// once bound) is accepted only where `port_zero_ok` (listening).
Endpoint parse_endpoint(const std::string& text, const std::string& flag, bool port_zero_ok);

}  // namespace drift
