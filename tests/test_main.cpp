// The main of the Catch2 test programs: the arithmetic of drift's own main first, so that the
// tests compute what a run computes (engine/training/cpu_arithmetic.hpp).
#define CATCH_CONFIG_RUNNER
#include "catch_torch.hpp"
#include "engine/training/cpu_arithmetic.hpp"

int main(int argc, char** argv) {
  drift::use_reproducible_cpu_arithmetic();
  return Catch::Session().run(argc, argv);
}
