#include "engine/models/zip_archive.hpp"

#include <zlib.h>

#include <algorithm>

#include "engine/core/error.hpp"

namespace drift {
namespace {

using Size = std::uint64_t;

// Little-endian fields of `bytes` at `at`, refused when they run past the end.
struct Reader {
  const std::string& bytes;
  const ArchiveRefusal& refuse;
  Size get(Size at, int width) const {
    if (at > bytes.size() || bytes.size() - at < static_cast<Size>(width)) refuse("a zip field past the end");
    Size value = 0;
    for (int i = width - 1; i >= 0; --i) value = value << 8 | static_cast<unsigned char>(bytes[at + i]);
    return value;
  }
  bool signature(Size at, std::uint32_t sig) const { return at + 4 <= bytes.size() && get(at, 4) == sig; }
};

// The end of central directory record, within the last 64 KiB + 22 bytes.
Size end_record(const Reader& r) {
  if (r.bytes.size() < 22) r.refuse("too short for a zip archive");
  Size eocd = r.bytes.size() - 22;
  while (!r.signature(eocd, 0x06054b50)) {
    if (eocd == 0 || r.bytes.size() - eocd > 65557) r.refuse("no end of the zip's central directory");
    --eocd;
  }
  return eocd;
}

// One central directory entry at `at`, completed from its zip64 extra field and its local
// header; `at` moves to the next entry.
ZipRecord directory_entry(const Reader& r, Size& at) {
  const auto& bytes = r.bytes;
  if (!r.signature(at, 0x02014b50)) r.refuse("a broken zip central directory");
  ZipRecord record;
  record.method = r.get(at + 10, 2);
  const Size name_length = r.get(at + 28, 2), extra_length = r.get(at + 30, 2);
  record.compressed = r.get(at + 20, 4);
  record.size = r.get(at + 24, 4);
  Size local = r.get(at + 42, 4);
  if (at + 46 + name_length > bytes.size()) r.refuse("a zip entry name past the end");
  record.name = bytes.substr(at + 46, name_length);
  // zip64 sizes and offset, in this order, for the fields that say 0xffffffff.
  for (Size e = at + 46 + name_length; e + 4 <= at + 46 + name_length + extra_length;) {
    const Size id = r.get(e, 2), length = r.get(e + 2, 2);
    Size field = e + 4;
    if (id == 1) {
      if (record.size == 0xffffffff) record.size = r.get(field, 8), field += 8;
      if (record.compressed == 0xffffffff) record.compressed = r.get(field, 8), field += 8;
      if (local == 0xffffffff) local = r.get(field, 8);
    }
    e += 4 + length;
  }
  at += 46 + name_length + extra_length + r.get(at + 32, 2);
  if (!r.signature(local, 0x04034b50)) r.refuse(record.name + " has no local zip header");
  record.data = local + 30 + r.get(local + 26, 2) + r.get(local + 28, 2);
  if (record.data > bytes.size() || record.compressed > bytes.size() - record.data)
    r.refuse(record.name + " runs past the end of the file");
  if (record.method == 0 && record.size != record.compressed)
    r.refuse(record.name + " is stored with two different sizes");
  if (record.method != 0 && record.method != 8)
    r.refuse(record.name + " is compressed with zip method " + std::to_string(record.method));
  // Readers allocate a record's declared size before they read it: deflate expands at most
  // 1032:1, so a larger claim is a lie.
  if (record.method == 8 && record.size > record.compressed * 1032 + 1024)
    r.refuse(record.name + " declares more than deflate can expand to");
  return record;
}

}  // namespace

void ArchiveRefusal::operator()(const std::string& why) const {
  throw UserError(name_ + ": not " + what_ + " drift can read safely (" + why + ")");
}

void ArchiveRefusal::not_zip() const {
  throw UserError(name_ + ": not " + what_ + " (" + writer_ + " writes a zip archive, and this file is not one)");
}

std::vector<ZipRecord> zip_records(const std::string& bytes, const ArchiveRefusal& refuse) {
  const Reader r{bytes, refuse};
  const Size eocd = end_record(r);
  Size entries = r.get(eocd + 10, 2), directory = r.get(eocd + 16, 4);
  if (entries == 0xffff || directory == 0xffffffff) {  // zip64, as PyTorch writes it
    if (eocd < 20 || !r.signature(eocd - 20, 0x07064b50)) refuse("a zip64 archive without its locator");
    const Size z64 = r.get(eocd - 20 + 8, 8);
    if (!r.signature(z64, 0x06064b50)) refuse("a zip64 locator that points nowhere");
    entries = r.get(z64 + 32, 8);
    directory = r.get(z64 + 48, 8);
  }
  if (entries > bytes.size() / 46) refuse("more zip entries than the file can hold");
  std::vector<ZipRecord> records;
  records.reserve(entries);
  Size at = directory;
  for (Size k = 0; k < entries; ++k) records.push_back(directory_entry(r, at));
  return records;
}

std::string record_bytes(const std::string& bytes, const ZipRecord& record, std::uint64_t largest,
                         const ArchiveRefusal& refuse) {
  if (record.size > largest)
    refuse(record.name + " declares " + std::to_string(record.size) + " bytes, more than the " +
           std::to_string(largest) + " drift reads there");
  if (record.method == 0) return bytes.substr(record.data, record.size);
  if (record.size > 0xffffffffu || record.compressed > 0xffffffffu)
    refuse(record.name + " is a deflated record of more than 4 GB");
  std::string out(record.size, '\0');
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) refuse("zlib would not start");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + record.data));
  z.avail_in = static_cast<uInt>(record.compressed);
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(record.size);
  const int status = inflate(&z, Z_FINISH);
  inflateEnd(&z);
  if (status != Z_STREAM_END || z.total_out != record.size)
    refuse(record.name + " does not inflate to its declared size");
  return out;
}

void check_archive_ends(std::istream& file, std::uint64_t size, const ArchiveRefusal& refuse) {
  if (size < 22) refuse("too short for a zip archive");
  std::string head(4, '\0');
  file.seekg(0);
  file.read(head.data(), 4);
  if (!file || head != std::string("PK\x03\x04", 4)) refuse.not_zip();
  // The end of central directory record lies within the last 64 KiB + 22 bytes.
  const Size tail_size = std::min<Size>(size, 65557 + 20);
  std::string tail(tail_size, '\0');
  file.seekg(static_cast<std::streamoff>(size - tail_size));
  file.read(tail.data(), static_cast<std::streamsize>(tail_size));
  if (!file) refuse("the file could not be read to its end");
  const Reader r{tail, refuse};
  Size eocd = tail_size - 22;
  while (!r.signature(eocd, 0x06054b50)) {
    if (eocd == 0) refuse("no end of the zip's central directory");
    --eocd;
  }
  const Size directory = r.get(eocd + 16, 4), directory_bytes = r.get(eocd + 12, 4);
  const Size at = size - tail_size + eocd;  // the record's offset in the file
  if (directory == 0xffffffff) {            // zip64: its locator sits just before the record
    if (eocd < 20 || !r.signature(eocd - 20, 0x07064b50)) refuse("a zip64 archive without its locator");
    if (r.get(eocd - 20 + 8, 8) >= at) refuse("a zip64 locator that points past its own record");
  } else if (directory + directory_bytes > at) {
    refuse("a zip central directory that runs past its end record");
  }
}

}  // namespace drift
