// What plugins rely on, without loading one (tests/cli_plugins.sh loads the example).
#include "catch_torch.hpp"
#include "engine/compose/plugins.hpp"
#include "engine/config/catalog.hpp"
#include "engine/core/version.hpp"

using namespace drift;

namespace {

struct Row {
  std::string name;
  int value = 0;
};

std::string refusal_of(Rows<Row>& rows, Row row) {
  try {
    add_row(rows, std::move(row), "sampler");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a catalogue takes a plugin's rows after its own and refuses a taken name", "[plugins]") {
  Rows<Row> rows = {{"uniform", 1}, {"cyclic", 2}};
  const Row* first = find_row(rows, "uniform");
  CHECK(refusal_of(rows, {"stratified", 3}).empty());
  CHECK(find_row(rows, "uniform") == first);  // rows found before stay where they were
  CHECK(row_names(rows) == std::vector<std::string>{"uniform", "cyclic", "stratified"});
  CHECK(row_named(rows, "stratified", "sampler").value == 3);
  CHECK(refusal_of(rows, {"cyclic", 4}) == "a plugin adds sampler 'cyclic', but drift already has one by that name");
  CHECK(refusal_of(rows, {"", 5}) == "a plugin adds sampler without a name");
  CHECK(rows.size() == 3);
}

TEST_CASE("drift's build text names its version, LibTorch, the C++ ABI and the rows' layout", "[plugins]") {
  const auto text = drift_build_text();
  CHECK(text.rfind("drift " + drift_version() + ", LibTorch " + torch_version() + ", C++ ABI ", 0) == 0);
  CHECK(text.find(", layout ") != std::string::npos);
}

TEST_CASE("a file that is no plugin is refused with one line", "[plugins]") {
  auto why = [](const std::string& path) {
    try {
      load_plugin(path);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(why("/nonexistent/plugin.so") ==
        "plugin /nonexistent/plugin.so: no such file (a shared library built with DRIFT_PLUGIN)");
  CHECK(why(DRIFT_SOURCE_DIR "/README.md").rfind("plugin " DRIFT_SOURCE_DIR "/README.md: cannot be loaded (", 0) == 0);
  CHECK(loaded_plugins().empty());
}
