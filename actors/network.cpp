#include "actors/network.hpp"

#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>

#include <chrono>
#include <fstream>
#include <stdexcept>

#include "engine/core/error.hpp"

namespace drift::actors {

void check_tls_files(const TlsOptions& tls) {
  if (!tls.enabled) return;
  const std::pair<const char*, const std::string*> files[] = {
      {"--cert", &tls.certificate}, {"--key", &tls.key}, {"--ca", &tls.ca}};
  for (const auto& [flag, path] : files) {
    if (path->empty())
      throw UserError(std::string("--tls needs ") + flag +
                      " FILE (PEM); see docs/devices.md#running-on-several-machines");
    if (!std::ifstream(*path)) throw UserError(std::string(flag) + " '" + *path + "' cannot be read");
  }
}

void configure_network(caf::actor_system_config& cfg, const TlsOptions& tls, double silent_link_s) {
  cfg.load<caf::io::middleman>();
  if (silent_link_s > 0) {
    // BASP heartbeats once a second, and a connection that hears nothing for silent_link_s is
    // closed: a link that drops every packet never resets the connection, and its actors would
    // otherwise be monitored as alive for the kernel's retransmission timeout (15 minutes).
    cfg.set("middleman.heartbeat-interval", caf::timespan{std::chrono::seconds(1)});
    cfg.set("middleman.connection-timeout",
            caf::timespan{std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(silent_link_s))});
  }
  if (!tls.enabled) return;
  cfg.load<caf::openssl::manager>();
  cfg.openssl_certificate = tls.certificate;
  cfg.openssl_key = tls.key;
  cfg.openssl_cafile = tls.ca;
}

std::uint16_t publish_actor(caf::actor_system& system, const caf::actor& whom, const Endpoint& at,
                            const TlsOptions& tls) {
  auto port = tls.enabled ? caf::openssl::publish(whom, at.port, at.host.c_str(), true)
                          : system.middleman().publish(whom, at.port, at.host.c_str(), true);
  if (!port) throw std::runtime_error("cannot listen on " + at.text() + ": " + system.render(port.error()));
  return *port;
}

caf::expected<caf::actor> connect_to(caf::actor_system& system, const Endpoint& at, const TlsOptions& tls) {
  if (tls.enabled) return caf::openssl::remote_actor(system, at.host, at.port);
  return system.middleman().remote_actor(at.host, at.port);
}

}  // namespace drift::actors
