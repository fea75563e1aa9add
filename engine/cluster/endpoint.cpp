#include "engine/cluster/endpoint.hpp"

#include <cctype>

#include "engine/core/error.hpp"

namespace drift {

std::string Endpoint::text() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Endpoint parse_endpoint(const std::string& text, const std::string& flag, bool port_zero_ok) {
  auto bad = [&](const std::string& why) {
    return UserError(flag + " '" + text + "': " + why + " (expected HOST:PORT, e.g. 127.0.0.1:4242)");
  };
  Endpoint e;
  std::string port_text = text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      throw bad("an IPv6 host is written [ADDRESS]:PORT");
    e.host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else if (const auto colon = text.rfind(':'); colon != std::string::npos) {
    if (text.find(':') != colon) throw bad("an IPv6 host is written [ADDRESS]:PORT");
    e.host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  if (e.host.empty()) throw bad("the host is empty");
  for (char c : e.host)
    if (std::isspace(static_cast<unsigned char>(c))) throw bad("the host contains a space");
  if (port_text.empty() || port_text.size() > 5) throw bad("the port must be a number from 1 to 65535");
  for (char c : port_text)
    if (!std::isdigit(static_cast<unsigned char>(c))) throw bad("the port must be a number from 1 to 65535");
  const auto port = std::stoul(port_text);
  if (port > 65535) throw bad("the port must be a number from 1 to 65535");
  if (port == 0 && !port_zero_ok) throw bad("port 0 is only for listening (any free port)");
  e.port = static_cast<std::uint16_t>(port);
  return e;
}

}  // namespace drift
