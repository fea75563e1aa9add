#include "engine/compose/toml_writer.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace drift {
namespace {

bool is_bare_key(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

// (Not named quoted(): std::quoted would win overload resolution by ADL on std::string.)
// A literal string ('text') where nothing needs escaping, as toml++ writes them; else a basic one.
std::string toml_string(std::string_view text) {
  const bool literal = std::none_of(
      text.begin(), text.end(), [](char c) { return c == '\'' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
  if (literal) return "'" + std::string(text) + "'";
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char escape[8];
          std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned char>(c));
          out += escape;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string key_text(std::string_view key) { return is_bare_key(key) ? std::string(key) : toml_string(key); }

std::string float_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;  // shortest that round-trips
  std::string text(buf, end);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

void write_value(std::ostream& out, const toml::node& node);

void write_array(std::ostream& out, const toml::array& array) {
  out << "[";
  for (std::size_t i = 0; i < array.size(); ++i) {
    out << (i ? ", " : " ");
    write_value(out, *array.get(i));
  }
  out << (array.empty() ? "]" : " ]");
}

void write_value(std::ostream& out, const toml::node& node) {
  if (const auto* v = node.as_floating_point())
    out << float_text(v->get());
  else if (const auto* i = node.as_integer())
    out << i->get();
  else if (const auto* b = node.as_boolean())
    out << (b->get() ? "true" : "false");
  else if (const auto* s = node.as_string())
    out << toml_string(s->get());
  else if (const auto* a = node.as_array())
    write_array(out, *a);
  else if (const auto* t = node.as_table()) {  // an inline table inside an array
    out << "{";
    bool first = true;
    for (auto&& [k, entry] : *t) {
      out << (first ? " " : ", ") << key_text(k.str()) << " = ";
      write_value(out, entry);
      first = false;
    }
    out << (first ? "}" : " }");
  }
}

// Values first, then sub-tables ([path.key]) and arrays of tables ([[path.key]]).
void write_table(std::ostream& out, const toml::table& table, const std::string& path) {
  for (auto&& [k, v] : table)
    if (!v.is_table() && !v.is_array_of_tables()) {
      out << key_text(k.str()) << " = ";
      write_value(out, v);
      out << "\n";
    }
  for (auto&& [k, v] : table) {
    const std::string child = (path.empty() ? "" : path + ".") + key_text(k.str());
    if (const auto* t = v.as_table()) {
      // A table that holds only tables needs no header of its own ([groups] before [groups.a]).
      const bool only_tables =
          !t->empty() && std::all_of(t->begin(), t->end(), [](auto&& kv) { return kv.second.is_table(); });
      if (!only_tables) out << "\n[" << child << "]\n";
      write_table(out, *t, child);
    } else if (v.is_array_of_tables()) {
      for (const auto& entry : *v.as_array()) {
        out << "\n[[" << child << "]]\n";
        write_table(out, *entry.as_table(), child);
      }
    }
  }
}

}  // namespace

std::string toml_text(const toml::table& root) {
  std::ostringstream out;
  write_table(out, root, "");
  return out.str();
}

}  // namespace drift
