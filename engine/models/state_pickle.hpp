#pragma once
// The tensors of a torch.save archive holding a dict of names to tensors (a state dict), as
// torch.export.save stores an exported program's parameters and buffers. LibTorch's own
// unpickler does not know the global torch.save writes for a parameter
// (torch._utils._rebuild_parameter) in 1.13 or 2.6, and trusts the sizes a file declares; this
// reader understands exactly the opcodes and globals a state dict needs, calls nothing else, and
// checks every storage and view against the bytes the archive holds (docs/models.md#hostile-files).
#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

#include "engine/models/zip_archive.hpp"

namespace drift {

struct StateEntry {
  std::string name;
  at::Tensor tensor;       // on the CPU, contiguous, a copy of the archive's bytes
  bool parameter = false;  // pickled as a Parameter (its requires_grad flag is `tensor`'s)
};

// The entries of the dict in `archive` (the bytes of a torch.save zip archive), in its order.
// A dict that is empty is read as empty. Throws UserError through `refuse` for anything else.
std::vector<StateEntry> read_state_dict(const std::string& archive, const ArchiveRefusal& refuse);

}  // namespace drift
