#!/usr/bin/env bash
# drift installed into a scratch prefix (cmake --install), and the example plugin built out of
# tree against that installation with find_package(drift CONFIG), as a user builds one
# (docs/plugins.md); the installed drift then loads it and runs it through cli_plugins.sh.
# OTHER_PLUGIN is the same source claiming another drift version.
#   plugin_package.sh CMAKE BUILD_DIR SOURCE_DIR CXX_COMPILER OTHER_PLUGIN
set -euo pipefail
cmake="$1" build="$2" source="$3" cxx="$4" other="$5"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$cmake" --install "$build" --prefix "$work/prefix" > "$work/install.log"
[[ -x "$work/prefix/bin/drift" ]] || { echo "no drift installed"; exit 1; }
[[ -f "$work/prefix/include/drift/engine/compose/plugin.hpp" ]] || { echo "no headers installed"; exit 1; }
[[ -f "$work/prefix/include/drift/engine/compose/plugin_build.hpp" ]] || { echo "no generated header"; exit 1; }

# -O0: the test proves the package builds a plugin that loads; speed is not its business.
"$cmake" -S "$source/docs/examples/plugin" -B "$work/plugin" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0 > "$work/configure.log" ||
  { cat "$work/configure.log"; exit 1; }
"$cmake" --build "$work/plugin" > "$work/build.log" || { cat "$work/build.log"; exit 1; }
plugin="$work/plugin/libfedprox_plugin.so"

# The installed drift and the plugin built against it go through everything cli_plugins.sh
# checks: list, run on 1 and 2 slots, resume, a study, a loopback cluster and the refusals.
bash "$(dirname "$0")/cli_plugins.sh" "$work/prefix/bin/drift" "$plugin" "$other"
echo "plugin package: passed"
