#pragma once
// Reader for gzip-compressed IDX files (the MNIST family's format).
#include <cstdint>
#include <string>
#include <vector>

namespace drift {

struct IdxArray {
  std::vector<std::int64_t> dims;  // as the header announces them
  std::vector<std::uint8_t> data;  // row-major, uint8 elements: the entries read
};

// The whole content of a gzip file (or of a plain file: zlib reads those unchanged). Throws
// UserError naming the file when it cannot be opened or the data is corrupt.
std::vector<std::uint8_t> read_gzip_file(const std::string& path);

// The first `max_items` entries along the first dimension (all when negative or more than the
// file holds). Throws UserError if the file is missing or not a well-formed uint8 IDX file.
IdxArray read_idx_gz(const std::string& path, std::int64_t max_items = -1);

}  // namespace drift
