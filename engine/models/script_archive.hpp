#pragma once
// A TorchScript file checked before LibTorch reads it. LibTorch's loader trusts the sizes a file
// declares (a 2 KB file can make its unpickler allocate and zero 20 GB), so drift walks the zip
// archive and every pickle in it first: each record stored or deflated within the file's bounds,
// and every length a pickle declares within what is left of its record (docs/torchscript.md).
#include <string>

namespace drift {

// Throws UserError, "NAME: ...", with one line saying what is wrong.
void check_script_archive(const std::string& bytes, const std::string& name);

}  // namespace drift
