#include "engine/cluster/join.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "engine/core/error.hpp"
#include "engine/core/version.hpp"

namespace drift {
namespace {

constexpr std::size_t kMinTokenLength = 16;

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

std::string build_text(std::uint32_t protocol, const std::string& drift, const std::string& torch) {
  return "drift " + drift + " (protocol " + std::to_string(protocol) + ", LibTorch " + torch + ")";
}

}  // namespace

JoinRequest make_join_request(std::string token, std::string worker, std::string devices,
                              std::string expected_scenario) {
  JoinRequest r;
  r.protocol = kClusterProtocol;
  r.drift_version = drift_version();
  r.torch_version = torch_version();
  r.token = std::move(token);
  r.worker = std::move(worker);
  r.devices = std::move(devices);
  r.expected_scenario = std::move(expected_scenario);
  return r;
}

bool constant_time_equal(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const auto y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

std::optional<std::string> join_refusal(const JoinPolicy& policy, const JoinRequest& request) {
  if (!constant_time_equal(policy.token, request.token)) return "wrong join token";
  if (request.protocol != kClusterProtocol || request.drift_version != drift_version() ||
      request.torch_version != torch_version())
    return "incompatible version: the coordinator runs " +
           build_text(kClusterProtocol, drift_version(), torch_version()) + ", the worker " +
           build_text(request.protocol, request.drift_version, request.torch_version);
  if (!request.expected_scenario.empty() && request.expected_scenario != policy.scenario_hash)
    return "scenario hash mismatch: the worker expects " + request.expected_scenario + ", the coordinator runs " +
           policy.scenario_hash;
  return std::nullopt;
}

std::optional<std::string> ready_refusal(const std::string& scenario_hash, const std::string& data_fingerprint,
                                         const WorkerReady& ready, std::size_t slots_sent) {
  if (ready.scenario_hash != scenario_hash)
    return "scenario hash mismatch: the worker resolved the scenario to " + ready.scenario_hash +
           ", the coordinator has " + scenario_hash;
  if (ready.data_fingerprint != data_fingerprint)
    return "data fingerprint mismatch: the worker built " + ready.data_fingerprint + ", the coordinator " +
           data_fingerprint + " (different dataset files on the two machines?)";
  if (ready.slots == 0 || ready.slots != slots_sent)
    return "the worker declared " + std::to_string(ready.slots) + " trainer slots and sent " +
           std::to_string(slots_sent);
  return std::nullopt;
}

std::string read_join_token(const std::string& file) {
  std::string token;
  std::string origin;
  if (!file.empty()) {
    std::ifstream in(file);
    if (!in) throw UserError("cannot read the join token file '" + file + "'");
    std::stringstream text;
    text << in.rdbuf();
    token = trimmed(text.str());
    origin = "the token file '" + file + "'";
  } else if (const char* env = std::getenv("DRIFT_JOIN_TOKEN")) {
    token = trimmed(env);
    origin = "DRIFT_JOIN_TOKEN";
  } else {
    throw UserError(
        "no join token: set DRIFT_JOIN_TOKEN or pass --token-file FILE (e.g. openssl rand -hex 16 > token; "
        "chmod 600 token)");
  }
  if (token.size() < kMinTokenLength)
    throw UserError(origin + " holds " + std::to_string(token.size()) + " characters; a join token needs at least " +
                    std::to_string(kMinTokenLength) + " (e.g. openssl rand -hex 16)");
  return token;
}

}  // namespace drift
