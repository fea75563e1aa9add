#pragma once
// CAF's own networking, with or without its OpenSSL module: the only transport drift uses
// between processes. Both sides of a TLS link present a certificate signed by the CA they
// were given, so a peer without one is refused before it can send a message.
#include <caf/all.hpp>

#include <string>

#include "engine/cluster/endpoint.hpp"

namespace drift::actors {

struct TlsOptions {
  bool enabled = false;
  std::string certificate;  // PEM: this side's certificate
  std::string key;          // PEM: its private key
  std::string ca;           // PEM: the CA that signed every peer's certificate
};

// Throws UserError when TLS is asked for without all three files, or one cannot be read.
void check_tls_files(const TlsOptions& tls);

// Loads the io middleman (and, with TLS, the OpenSSL manager with the given files). A
// connection that hears nothing for `silent_link_s` seconds (> 0) is closed, so that the
// actors behind it are reported down.
void configure_network(caf::actor_system_config& cfg, const TlsOptions& tls, double silent_link_s = 0);

// Publishes `whom` at `at` (port 0: any free port) and returns the bound port. Throws
// std::runtime_error naming the address when binding fails.
std::uint16_t publish_actor(caf::actor_system& system, const caf::actor& whom, const Endpoint& at,
                            const TlsOptions& tls);

// Connects to the actor published at `at`.
caf::expected<caf::actor> connect_to(caf::actor_system& system, const Endpoint& at, const TlsOptions& tls);

}  // namespace drift::actors
