// `drift list --markdown`: docs/catalogue.md, every member of every family and every scenario
// key, written from the rows themselves. The test catalogue_docs compares the page with this
// output, so a member or key added without its page fails (docs/development.md).
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "engine/algorithms/algorithm.hpp"
#include "engine/compose/schema.hpp"
#include "engine/data/dataset.hpp"
#include "engine/data/partition.hpp"
#include "engine/models/model.hpp"
#include "engine/population/availability.hpp"
#include "engine/sampling/sampler.hpp"
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
  heading("Datasets", "`[data] dataset`; docs/datasets.md says where each comes from.");
  for (const auto& d : dataset_catalog())
    member(d.name, d.description,
           {d.debian_package.empty() ? "download it yourself; set data.path" : "from " + d.debian_package});
  heading("Partition schemes", "`[partition] scheme`, with the scheme's own keys in `[partition]`.");
  for (const auto& p : partition_catalog()) {
    member(p.name, p.description);
    member_keys(p.params);
  }
  heading("Models", "`[model] name`; *packs*: several clients train as one model (`devices.pack`).");
  for (const auto& m : model_catalog())
    member(m.name, m.description,
           m.packs != PackedLayout::none ? std::vector<std::string>{"packs"} : std::vector<std::string>{});
  heading("Algorithms",
          "`[algorithm] name`, with the algorithm's own keys in `[algorithm]`; *packs*: trains in packs, *dp*: "
          "takes `[privacy]`, *edges*: runs under `[hierarchy]`, *moves*: its clients may move between edges.");
  for (const auto& a : algorithm_catalog()) {
    std::vector<std::string> marks;
    if (a.packed) marks.push_back("packs");
    if (a.privatisable) marks.push_back("dp");
    if (a.edge_tier) marks.push_back("edges");
    if (a.edge_moves) marks.push_back("moves");
    member(a.name, a.description, marks);
    for (const auto& p : a.presets) std::cout << "  - preset `" << p.name << "`: " << md(p.description) << "\n";
    member_keys(a.params);
  }
  heading("Samplers", "`[sampler] name`, with the sampler's own keys in `[sampler]`.");
  for (const auto& s : sampler_catalog()) {
    member(s.name, s.description);
    member_keys(s.params);
  }
  heading("Availability models",
          "`[availability] model`, with the model's own keys in `[availability]` (and a group's "
          "`[groups.NAME.availability]`).");
  for (const auto& m : availability_catalog()) {
    member(m.name, m.description);
    member_keys(m.params);
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
