#!/usr/bin/env bash
# drift installed into a scratch prefix (cmake --install), and the example plugin built out of
# tree against that installation with find_package(drift CONFIG), as a user builds one
# (docs/plugins.md); the installed drift then loads it and runs it.
#   plugin_package.sh CMAKE BUILD_DIR SOURCE_DIR CXX_COMPILER
set -euo pipefail
cmake="$1" build="$2" source="$3" cxx="$4"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/cli_lib.sh"

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

drift="$work/prefix/bin/drift"
expect_code 0 "$drift" list --plugin "$plugin"
grep -q "^  fedprox-plugin  *FedProx from a plugin" "$work/last.out"
cat > "$work/tiny.toml" <<TOML
seed = 3
[data]
max_train_samples = 600
max_test_samples = 200
[federation]
clients = 4
rounds = 2
[sampler]
clients_per_round = 2
[algorithm]
mu = 0.05
[output]
runs_dir = "$work/runs"
TOML
expect_code 0 "$drift" run "$work/tiny.toml" --out "$work/builtin" --set algorithm.name=fedprox --no-progress
expect_code 0 "$drift" run "$work/tiny.toml" --out "$work/plugin-run" --set algorithm.name=fedprox-plugin \
  --plugin "$plugin" --no-progress
same "$work/builtin" "$work/plugin-run"
echo "plugin package: passed"
