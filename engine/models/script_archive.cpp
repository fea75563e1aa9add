#include "engine/models/script_archive.hpp"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>

#include "engine/core/error.hpp"

namespace drift {
namespace {

using Size = std::uint64_t;

class Refusal {
 public:
  explicit Refusal(std::string name) : name_(std::move(name)) {}
  [[noreturn]] void operator()(const std::string& why) const {
    throw UserError(name_ + ": not a TorchScript module drift can read safely (" + why + ")");
  }

 private:
  std::string name_;
};

// Little-endian fields of `bytes` at `at`, refused when they run past the end.
struct Reader {
  const std::string& bytes;
  const Refusal& refuse;
  Size get(Size at, int width) const {
    if (at > bytes.size() || bytes.size() - at < static_cast<Size>(width)) refuse("a zip field past the end");
    Size value = 0;
    for (int i = width - 1; i >= 0; --i) value = value << 8 | static_cast<unsigned char>(bytes[at + i]);
    return value;
  }
  bool signature(Size at, std::uint32_t sig) const { return at + 4 <= bytes.size() && get(at, 4) == sig; }
};

// Every length a pickle declares must fit in what is left of it; an opcode drift does not know
// ends the walk as a refusal, since LibTorch's reading of it could not be bounded.
void check_pickle(const std::string& p, const std::string& record, const Refusal& refuse) {
  const Reader r{p, refuse};
  Size at = 0;
  const auto skip = [&](Size n) {
    if (n > p.size() - at)
      refuse(record + " declares " + std::to_string(n) + " bytes where " + std::to_string(p.size() - at) + " remain");
    at += n;
  };
  const auto line = [&] {
    const auto end = p.find('\n', at);
    if (end == std::string::npos) refuse(record + " has an unterminated pickle line");
    at = end + 1;
  };
  while (at < p.size()) {
    const auto op = static_cast<unsigned char>(p[at++]);
    switch (op) {
      case '.':
        return;  // STOP
      case '(':
      case ')':
      case '0':
      case '1':
      case '2':
      case 'N':
      case 't':
      case ']':
      case 'a':
      case 'e':
      case '}':
      case 's':
      case 'u':
      case 'R':
      case 'b':
      case 'Q':
      case 'l':
      case 'd':
      case 'o':
      case 0x81:
      case 0x85:
      case 0x86:
      case 0x87:
      case 0x88:
      case 0x89:
      case 0x8f:
      case 0x90:
      case 0x91:
      case 0x92:
      case 0x93:
      case 0x94:
      case 0x97:
      case 0x98:
        break;
      case 0x80:
      case 'K':
      case 'q':
      case 'h':
      case 0x82:
        skip(1);
        break;
      case 'M':
      case 0x83:
        skip(2);
        break;
      case 'J':
      case 'r':
      case 'j':
      case 0x84:
        skip(4);
        break;
      case 'G':
        skip(8);
        break;
      case 0x95:
        skip(8);
        break;  // FRAME: its length is checked by the opcodes inside it
      case 'I':
      case 'L':
      case 'F':
      case 'S':
      case 'V':
      case 'P':
      case 'g':
      case 'p':
        line();
        break;
      case 'c':
      case 'i':
        line();
        line();
        break;
      case 0x8a:
      case 'U':
      case 'C':
      case 0x8c:
        skip(1);
        skip(r.get(at - 1, 1));
        break;
      case 0x8b:
      case 'T':
      case 'X':
      case 'B':
        skip(4);
        skip(r.get(at - 4, 4));
        break;
      case 0x8d:
      case 0x8e:
      case 0x96:
        skip(8);
        skip(r.get(at - 8, 8));
        break;
      default:
        refuse(record + " holds pickle opcode " + std::to_string(op) + ", which drift does not read");
    }
  }
  refuse(record + " is a pickle without its end");
}

// A deflated record inflated within its declared size (checked against the compressed one).
std::string inflate_record(const char* data, Size compressed, Size size, const std::string& record,
                           const Refusal& refuse) {
  if (size > 0xffffffffu) refuse(record + " is a pickle of more than 4 GB");
  std::string out(size, '\0');
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) refuse("zlib would not start");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
  z.avail_in = static_cast<uInt>(compressed);
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(size);
  const int status = inflate(&z, Z_FINISH);
  inflateEnd(&z);
  if (status != Z_STREAM_END || z.total_out != size) refuse(record + " does not inflate to its declared size");
  return out;
}

bool is_pickle(const std::string& record) {
  const auto ends = [&](const char* tail) {
    const auto n = std::strlen(tail);
    return record.size() >= n && record.compare(record.size() - n, n, tail) == 0;
  };
  return ends(".pkl") || ends("_pkl");
}

}  // namespace

void check_archive_ends(std::istream& file, std::uint64_t size, const std::string& name) {
  const Refusal refuse(name);
  if (size < 22) refuse("too short for a zip archive");
  std::string head(4, '\0');
  file.seekg(0);
  file.read(head.data(), 4);
  if (!file || head != std::string("PK\x03\x04", 4))
    throw UserError(name +
                    ": not a TorchScript module (torch.jit.save writes a zip archive, and this file is not one)");
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

std::string check_script_archive(const std::string& bytes, const std::string& name) {
  const Refusal refuse(name);
  const Reader r{bytes, refuse};
  // The end of central directory record, within the last 64 KiB + 22 bytes.
  if (bytes.size() < 22) refuse("too short for a zip archive");
  Size eocd = bytes.size() - 22;
  while (!r.signature(eocd, 0x06054b50)) {
    if (eocd == 0 || bytes.size() - eocd > 65557) refuse("no end of the zip's central directory");
    --eocd;
  }
  Size entries = r.get(eocd + 10, 2), directory = r.get(eocd + 16, 4);
  if (entries == 0xffff || directory == 0xffffffff) {  // zip64, as PyTorch writes it
    if (eocd < 20 || !r.signature(eocd - 20, 0x07064b50)) refuse("a zip64 archive without its locator");
    const Size z64 = r.get(eocd - 20 + 8, 8);
    if (!r.signature(z64, 0x06064b50)) refuse("a zip64 locator that points nowhere");
    entries = r.get(z64 + 32, 8);
    directory = r.get(z64 + 48, 8);
  }
  if (entries > bytes.size() / 46) refuse("more zip entries than the file can hold");
  bool version = false, data_pickle = false;  // the records LibTorch needs before anything else
  std::string format_version;
  Size at = directory;
  for (Size k = 0; k < entries; ++k) {
    if (!r.signature(at, 0x02014b50)) refuse("a broken zip central directory");
    const Size method = r.get(at + 10, 2), name_length = r.get(at + 28, 2), extra_length = r.get(at + 30, 2);
    Size compressed = r.get(at + 20, 4), size = r.get(at + 24, 4), local = r.get(at + 42, 4);
    if (at + 46 + name_length > bytes.size()) refuse("a zip entry name past the end");
    const std::string record = bytes.substr(at + 46, name_length);
    // zip64 sizes and offset, in this order, for the fields that say 0xffffffff.
    for (Size e = at + 46 + name_length; e + 4 <= at + 46 + name_length + extra_length;) {
      const Size id = r.get(e, 2), length = r.get(e + 2, 2);
      Size field = e + 4;
      if (id == 1) {
        if (size == 0xffffffff) size = r.get(field, 8), field += 8;
        if (compressed == 0xffffffff) compressed = r.get(field, 8), field += 8;
        if (local == 0xffffffff) local = r.get(field, 8);
      }
      e += 4 + length;
    }
    at += 46 + name_length + extra_length + r.get(at + 32, 2);
    // torch.jit.save keeps the format version at ARCHIVE/version or, since PyTorch 2.x, at
    // ARCHIVE/.data/version; LibTorch's reader looks for either.
    const auto slash = record.find('/');
    const auto in_archive = [&](const char* file) {
      return slash != std::string::npos && record.compare(slash + 1, std::string::npos, file) == 0;
    };
    const bool version_record = in_archive("version") || in_archive(".data/version");
    version = version || version_record;
    data_pickle = data_pickle || in_archive("data.pkl");
    if (!r.signature(local, 0x04034b50)) refuse(record + " has no local zip header");
    const Size data = local + 30 + r.get(local + 26, 2) + r.get(local + 28, 2);
    if (data > bytes.size() || compressed > bytes.size() - data) refuse(record + " runs past the end of the file");
    if (method == 0 && size != compressed) refuse(record + " is stored with two different sizes");
    if (method != 0 && method != 8) refuse(record + " is compressed with zip method " + std::to_string(method));
    // LibTorch allocates a record's declared size before it reads it: deflate expands at most
    // 1032:1, so a larger claim is a lie.
    if (method == 8 && size > compressed * 1032 + 1024) refuse(record + " declares more than deflate can expand to");
    if (version_record && method == 0 && size <= 32) format_version = bytes.substr(data, size);
    if (!is_pickle(record)) continue;
    if (method == 0)
      check_pickle(bytes.substr(data, size), record, refuse);
    else
      check_pickle(inflate_record(bytes.data() + data, compressed, size, record, refuse), record, refuse);
  }
  // Without them LibTorch's reader gives up in its constructor, which leaks its open archive.
  if (!version || !data_pickle) refuse("no version or data.pkl record");
  while (!format_version.empty() && std::isspace(static_cast<unsigned char>(format_version.back())))
    format_version.pop_back();
  return format_version;
}

}  // namespace drift
