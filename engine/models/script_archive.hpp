#pragma once
// A TorchScript file checked before LibTorch reads it. LibTorch's loader trusts the sizes a file
// declares (a 2 KB file can make its unpickler allocate and zero 20 GB), so drift walks the zip
// archive and every pickle in it first: each record stored or deflated within the file's bounds,
// and every length a pickle declares within what is left of its record (docs/torchscript.md).
#include <cstdint>
#include <istream>
#include <string>

namespace drift {

// Throws UserError, "NAME: ...", with one line saying what is wrong. Returns the archive's
// format version (its version record, "10" say) where the record is stored uncompressed, as
// torch.jit.save writes it; "" otherwise.
std::string check_script_archive(const std::string& bytes, const std::string& name);

// Before a file of `size` bytes is read whole: its first local header and its end of central
// directory, read from the stream's two ends, must be a zip archive's, with the directory inside
// the file. A multi-gigabyte file of zeros is then refused in microseconds, not after it filled
// memory. The same UserError as check_script_archive.
void check_archive_ends(std::istream& file, std::uint64_t size, const std::string& name);

}  // namespace drift
