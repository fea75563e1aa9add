#include "engine/training/cpu_arithmetic.hpp"

#include <ATen/Parallel.h>

namespace drift {

void use_reproducible_cpu_arithmetic() { at::set_num_threads(1); }

}  // namespace drift
