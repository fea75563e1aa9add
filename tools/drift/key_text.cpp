#include "key_text.hpp"

#include "engine/config/suggest.hpp"

namespace drift::cli {

std::string value_text(const ParamValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>)
          return x ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::string>)
          return "\"" + x + "\"";
        else if constexpr (std::is_same_v<T, std::vector<double>>) {
          std::string out;
          for (double d : x) out += (out.empty() ? "" : ", ") + format_bound(d);
          return "[" + out + "]";
        } else {
          return format_bound(static_cast<double>(x));
        }
      },
      v);
}

std::string key_line(const ParamSpec& spec, bool with_help) {
  std::string line = describe(spec.kind).substr(describe(spec.kind).find(' ') + 1);
  line = line.substr(0, line.find(" ("));
  line += spec.default_value ? ", default " + value_text(*spec.default_value) : ", optional";
  if (spec.min || spec.max)
    line += std::string(", in ") + (spec.min ? (spec.min_exclusive ? "(" : "[") + format_bound(*spec.min) : "(-inf") +
            ", " + (spec.max ? format_bound(*spec.max) + "]" : "inf)");
  if (spec.choices) line += ", one of: " + join(spec.choices());
  return with_help ? line + "; " + spec.help : line;
}

}  // namespace drift::cli
