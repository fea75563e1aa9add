#pragma once
// Every family of the catalogue as one listing, walked once: `drift list` prints it as text and
// `drift list --markdown` as docs/catalogue.md, so the two cannot list different members, marks
// or keys.
#include <string>
#include <utility>
#include <vector>

#include "engine/config/param_spec.hpp"

namespace drift::cli {

struct ListedMember {
  std::string name;
  std::string description;
  std::vector<std::string> marks;                            // "packs", "dp", "from fonts-...", ...
  std::vector<std::pair<std::string, std::string>> presets;  // name, description
  std::vector<ParamSpec> keys;                               // its own keys
};

struct ListedFamily {
  std::string title;        // "Partition schemes", the catalogue page's heading
  std::string short_title;  // "partitions", as `drift list` has always named it
  std::string intro;        // markdown: where its members are named in a scenario
  std::vector<ListedMember> members;
};

std::vector<ListedFamily> catalogue_listing();

}  // namespace drift::cli
