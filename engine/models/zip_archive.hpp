#pragma once
// The records of a zip archive, read from its central directory with every offset and size
// checked against the file, before any parser drift does not own is handed a byte of it. Model
// files are zip archives: torch.jit.save's, torch.export.save's, and the torch.save archive
// inside the latter (docs/models.md#hostile-files).
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace drift {

// Throws UserError "NAME: not WHAT drift can read safely (WHY)", WHAT being the kind of file
// expected ("a TorchScript module") and WRITER the call that writes it ("torch.jit.save").
class ArchiveRefusal {
 public:
  ArchiveRefusal(std::string name, std::string what, std::string writer)
      : name_(std::move(name)), what_(std::move(what)), writer_(std::move(writer)) {}
  [[noreturn]] void operator()(const std::string& why) const;
  // "NAME: not WHAT (WRITER writes a zip archive, and this file is not one)".
  [[noreturn]] void not_zip() const;
  const std::string& name() const { return name_; }

 private:
  std::string name_, what_, writer_;
};

struct ZipRecord {
  std::string name;
  std::uint64_t method = 0;      // 0 stored, 8 deflated (any other is refused)
  std::uint64_t compressed = 0;  // bytes in the file
  std::uint64_t size = 0;        // bytes once inflated
  std::uint64_t data = 0;        // offset of the record's first byte in the archive
};

// Every record of the archive in `bytes`, in the order of its central directory; each lies
// within the file, is stored (with one size) or deflated (claiming no more than deflate can
// expand to). zip64 directories are read, as PyTorch writes them for large files.
std::vector<ZipRecord> zip_records(const std::string& bytes, const ArchiveRefusal& refuse);

// A record's bytes: a stored one copied, a deflated one inflated to exactly its declared size.
// `largest` bounds what a record may declare.
std::string record_bytes(const std::string& bytes, const ZipRecord& record, std::uint64_t largest,
                         const ArchiveRefusal& refuse);

// Before a file of `size` bytes is read whole: its first local header and its end of central
// directory, read from the stream's two ends, must be a zip archive's, with the directory inside
// the file. A multi-gigabyte file of zeros is then refused in microseconds, not after it filled
// memory.
void check_archive_ends(std::istream& file, std::uint64_t size, const ArchiveRefusal& refuse);

}  // namespace drift
