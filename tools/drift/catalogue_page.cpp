// `drift list --markdown`: docs/catalogue.md, every member of every family and every scenario
// key, written from the rows themselves. The test catalogue_docs compares the page with this
// output, so a member or key added without its page fails (docs/development.md).
#include <iostream>
#include <string>
#include <vector>

#include "catalogue_listing.hpp"
#include "commands.hpp"
#include "engine/compose/schema.hpp"
#include "key_text.hpp"

namespace drift::cli {
namespace {

// A row's text as markdown: its `*` (mu/2)*||w||^2, max_*_samples) are not emphasis.
std::string md(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '*') out += '\\';
    out += c;
  }
  return out;
}

void heading(const std::string& title, const std::string& intro) {
  std::cout << "\n## " << title << "\n\n" << intro << "\n\n";
}

void member(const std::string& name, const std::string& text, const std::vector<std::string>& marks = {}) {
  std::cout << "- **`" << name << "`**: " << md(text);
  if (!marks.empty()) {
    std::string joined;
    for (const auto& m : marks) joined += (joined.empty() ? "" : ", ") + m;
    std::cout << " *(" << joined << ")*";
  }
  std::cout << "\n";
}

void member_keys(const std::vector<ParamSpec>& keys) {
  for (const auto& k : keys)
    std::cout << "  - `" << k.key << "`: " << md(k.help) << " (" << md(key_line(k, false)) << ")\n";
}

void section_keys(const std::string& title, const std::vector<ParamSpec>& keys) {
  std::cout << "\n### " << title << "\n\n";
  for (const auto& k : keys) std::cout << "- `" << k.key << "`: " << md(key_line(k)) << "\n";
}

void families() {
  for (const auto& family : catalogue_listing()) {
    heading(family.title, family.intro);
    for (const auto& m : family.members) {
      member(m.name, m.description, m.marks);
      for (const auto& [name, text] : m.presets) std::cout << "  - preset `" << name << "`: " << md(text) << "\n";
      member_keys(m.keys);
    }
  }
}

}  // namespace

int list_markdown_command() {
  std::cout << "# Catalogue and scenario keys\n\n"
               "<!-- Written by `drift list --markdown > docs/catalogue.md`; edit the rows, not this page. -->\n\n"
               "Every dataset, partition scheme, model, algorithm, sampler and availability model drift has, "
               "with its own keys, and every key of a scenario file: what `drift list` and `drift list keys` "
               "print, as one page. It is written from the catalogue's rows, and the test `catalogue_docs` "
               "fails when a row changes and this page was not written again "
               "([development.md](development.md#the-catalogue-page)). How the keys work together: "
               "[scenarios.md](scenarios.md).\n";
  families();
  std::cout << "\n## Scenario keys\n\nEach key with its type, default, range and what it does.\n";
  for (const auto& section : scenario_schema())
    section_keys(section.name.empty() ? "Top level" : "`[" + section.name + "]`: " + md(section.help), section.keys);
  section_keys("`[groups.NAME]`: a named set of clients", group_schema());
  std::cout << "\n`[groups.NAME.profile]` and `[groups.NAME.availability]` take the keys of `[profile]` and "
               "`[availability]` for the group's clients.\n";
  section_keys("`[[timeline]]`: something that happens at a round or a virtual time", timeline_schema());
  std::cout << "\n`drift resume --set` may change: ";
  const auto keys = resumable_keys();
  for (std::size_t i = 0; i < keys.size(); ++i) std::cout << (i ? ", " : "") << "`" << keys[i] << "`";
  std::cout << ".\n";
  return 0;
}

}  // namespace drift::cli
