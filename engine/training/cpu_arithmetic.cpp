#include "engine/training/cpu_arithmetic.hpp"

#include <ATen/Parallel.h>
#include <dlfcn.h>

#include <cstdlib>

namespace drift {

void use_reproducible_cpu_arithmetic() {
  setenv("OMP_NUM_THREADS", "1", 1);  // read by a child's OpenMP runtime as it loads
  use_reproducible_cpu_arithmetic_in_this_thread();
}

void use_reproducible_cpu_arithmetic_in_this_thread() {
  thread_local bool done = false;
  if (done) return;
  at::set_num_threads(1);  // also sets this thread's OpenMP count
  done = true;
}

int openmp_threads_in_this_thread() {
  // Looked up, not linked: the runtime is LibTorch's (a CUDA LibTorch brings its own libgomp).
  using Query = int (*)();
  const auto query = reinterpret_cast<Query>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  return query ? query() : 0;
}

}  // namespace drift
