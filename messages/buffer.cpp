#include "messages/buffer.hpp"

namespace drift::msg {

const std::vector<char>& Buffer::bytes() const {
  static const std::vector<char> kEmpty;
  return bytes_ ? *bytes_ : kEmpty;
}

}  // namespace drift::msg
