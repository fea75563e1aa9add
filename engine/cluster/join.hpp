#pragma once
// The join handshake between a coordinator and a worker, as plain data and plain rules (the
// actors only carry it). A worker asks to join with a token and its versions; if welcome, it
// receives the resolved scenario, rebuilds the data from it and the seed, and reports back
// the hashes of what it built. Only then are its trainer slots given jobs.
#include <cstdint>
#include <optional>
#include <string>

namespace drift {

struct JoinRequest {
  std::uint32_t protocol = 0;
  std::string drift_version;
  std::string torch_version;
  std::string token;
  std::string worker;             // the worker's name, for both sides' logs
  std::string devices;            // its device pool, "cpu:2,cuda:0x4"
  std::string expected_scenario;  // the scenario hash the worker insists on; empty: any
};

// The answer to a join (with the scenario) and to a ready (accepted or not, and why).
struct JoinReply {
  bool accepted = false;
  std::string reason;
  std::uint64_t session = 0;
  std::string scenario_toml;
  std::string scenario_hash;
};

struct WorkerReady {
  std::uint64_t session = 0;
  std::string scenario_hash;     // of the scenario as the worker resolved it
  std::string data_fingerprint;  // of the dataset and partition the worker rebuilt
  std::uint32_t slots = 0;
};

// A request stamped with this build's versions.
JoinRequest make_join_request(std::string token, std::string worker, std::string devices,
                              std::string expected_scenario);

struct JoinPolicy {
  std::string token;
  std::string scenario_hash;
};

// Why `request` is refused, or nullopt if welcome. The token is checked first and in
// constant time, so a peer without it learns nothing else (not even the versions).
std::optional<std::string> join_refusal(const JoinPolicy& policy, const JoinRequest& request);

// Why a worker's report after rebuilding is refused: another scenario or other data (a
// different dataset file on that machine would silently change the numbers).
std::optional<std::string> ready_refusal(const std::string& scenario_hash, const std::string& data_fingerprint,
                                         const WorkerReady& ready, std::size_t slots_sent);

bool constant_time_equal(const std::string& a, const std::string& b);

// The join token: the contents of `file` if given, else $DRIFT_JOIN_TOKEN; surrounding
// whitespace is ignored. Never taken from the command line, where `ps` would show it.
// Throws UserError when there is none, or it is shorter than 16 characters.
std::string read_join_token(const std::string& file);

}  // namespace drift
