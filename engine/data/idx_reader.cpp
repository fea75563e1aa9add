#include "engine/data/idx_reader.hpp"

#include <zlib.h>

#include <memory>

#include "engine/core/error.hpp"

namespace drift {

std::vector<std::uint8_t> read_gzip_file(const std::string& path) {
  std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(path.c_str(), "rb"), gzclose);
  if (!file) throw UserError(path + ": cannot open");
  gzbuffer(file.get(), 1 << 20);
  std::vector<std::uint8_t> bytes;
  std::uint8_t chunk[1 << 16];
  for (;;) {
    const int n = gzread(file.get(), chunk, sizeof(chunk));
    if (n < 0) throw UserError(path + ": corrupt gzip data");
    if (n == 0) break;
    bytes.insert(bytes.end(), chunk, chunk + n);
  }
  return bytes;
}

IdxArray read_idx_gz(const std::string& path) {
  const auto bytes = read_gzip_file(path);
  auto be32 = [&](std::size_t offset) {
    return (std::uint32_t{bytes[offset]} << 24) | (std::uint32_t{bytes[offset + 1]} << 16) |
           (std::uint32_t{bytes[offset + 2]} << 8) | std::uint32_t{bytes[offset + 3]};
  };
  if (bytes.size() < 4 || bytes[0] != 0 || bytes[1] != 0)
    throw UserError(path + ": not an IDX file (bad magic number)");
  if (bytes[2] != 0x08) throw UserError(path + ": IDX element type is not uint8");
  const std::size_t ndim = bytes[3];
  if (ndim == 0 || bytes.size() < 4 + 4 * ndim) throw UserError(path + ": truncated IDX header");

  IdxArray out;
  std::size_t expected = 1;
  for (std::size_t i = 0; i < ndim; ++i) {
    out.dims.push_back(be32(4 + 4 * i));
    expected *= static_cast<std::size_t>(out.dims.back());
  }
  const std::size_t header = 4 + 4 * ndim;
  if (bytes.size() - header != expected) {
    throw UserError(path + ": IDX header announces " + std::to_string(expected) + " bytes of data, file has " +
                    std::to_string(bytes.size() - header));
  }
  out.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end());
  return out;
}

}  // namespace drift
