#include "engine/core/version.hpp"

#include <torch/version.h>

namespace drift {

std::string drift_version() { return DRIFT_VERSION; }

std::string torch_version() { return TORCH_VERSION; }

}  // namespace drift
