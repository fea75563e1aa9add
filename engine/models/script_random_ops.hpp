#pragma once
// Which op of a TorchScript method draws random numbers. LibTorch draws them from its
// process-wide generator, which slots share in whatever order they run, so a module that draws
// would not repeat a run; drift refuses it (docs/torchscript.md#how-it-runs). A dropout whose
// probability the module fixes at 0 draws nothing, and attention and transformer layers built
// with dropout 0 carry exactly such dropouts: those are allowed.
#include <map>
#include <set>
#include <string>

namespace torch::jit {
struct Module;
}

namespace drift {

// Ops ("aten::bernoulli") that draw whatever their arguments.
const std::set<std::string>& always_random();
// Ops that draw only with a probability above 0, and the argument that holds it ("p").
const std::map<std::string, std::string>& random_with_probability();

// The first op of `method` (its submodules' code inlined) that may draw random numbers, or ""
// when none can; "" too when the module has no such method.
std::string random_op_in(const torch::jit::Module& module, const std::string& method);

}  // namespace drift
