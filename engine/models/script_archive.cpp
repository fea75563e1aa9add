#include "engine/models/script_archive.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>

#include "engine/core/error.hpp"
#include "engine/models/zip_archive.hpp"

namespace drift {
namespace {

using Size = std::uint64_t;

using Refusal = ArchiveRefusal;

// Little-endian fields of a pickle, refused when they run past its end.
struct Reader {
  const std::string& bytes;
  const Refusal& refuse;
  Size get(Size at, int width) const {
    if (at > bytes.size() || bytes.size() - at < static_cast<Size>(width)) refuse("a pickle field past the end");
    Size value = 0;
    for (int i = width - 1; i >= 0; --i) value = value << 8 | static_cast<unsigned char>(bytes[at + i]);
    return value;
  }
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

bool is_pickle(const std::string& record) {
  const auto ends = [&](const char* tail) {
    const auto n = std::strlen(tail);
    return record.size() >= n && record.compare(record.size() - n, n, tail) == 0;
  };
  return ends(".pkl") || ends("_pkl");
}

Refusal script_refusal(const std::string& name) { return {name, "a TorchScript module", "torch.jit.save"}; }

}  // namespace

void check_archive_ends(std::istream& file, std::uint64_t size, const std::string& name) {
  check_archive_ends(file, size, script_refusal(name));
}

std::string check_script_archive(const std::string& bytes, const std::string& name) {
  const auto refuse = script_refusal(name);
  bool version = false, data_pickle = false;  // the records LibTorch needs before anything else
  std::string format_version;
  for (const auto& record : zip_records(bytes, refuse)) {
    // torch.jit.save keeps the format version at ARCHIVE/version or, since PyTorch 2.x, at
    // ARCHIVE/.data/version; LibTorch's reader looks for either.
    const auto slash = record.name.find('/');
    const auto in_archive = [&](const char* file) {
      return slash != std::string::npos && record.name.compare(slash + 1, std::string::npos, file) == 0;
    };
    const bool version_record = in_archive("version") || in_archive(".data/version");
    version = version || version_record;
    data_pickle = data_pickle || in_archive("data.pkl");
    if (version_record && record.method == 0 && record.size <= 32)
      format_version = bytes.substr(record.data, record.size);
    if (is_pickle(record.name)) check_pickle(record_bytes(bytes, record, 0xffffffffu, refuse), record.name, refuse);
  }
  // Without them LibTorch's reader gives up in its constructor, which leaks its open archive.
  if (!version || !data_pickle) refuse("no version or data.pkl record");
  while (!format_version.empty() && std::isspace(static_cast<unsigned char>(format_version.back())))
    format_version.pop_back();
  return format_version;
}

}  // namespace drift
