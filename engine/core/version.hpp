#pragma once
// What a drift build is, for `--version` and for the cluster's compatibility check: a worker
// joins only a coordinator with the same drift, wire protocol and LibTorch, because those
// decide whether both sides compute byte-identical updates.
#include <cstdint>
#include <string>

namespace drift {

// Bumped whenever a message between coordinator and worker changes meaning, or one is added that
// an older worker could not answer.
inline constexpr std::uint32_t kClusterProtocol = 2;  // 2: edge hosts (--edges-on-workers)

std::string drift_version();  // "0.1.0", from CMake's project version
std::string torch_version();  // the linked LibTorch, "1.13.1"

}  // namespace drift
