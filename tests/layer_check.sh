#!/usr/bin/env bash
# The layer rule itself (cmake/check_layer.cmake, run before each layer's build): a file that
# includes a header of a higher layer is refused with its name and the include, and a file that
# includes only its own and lower layers passes. The real tree passes by being built.
set -euo pipefail
cmake_bin="$1"
source_dir="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/engine/core" "$work/engine/config" "$work/engine/sim"
printf '#pragma once\n#include "engine/core/error.hpp"\n#include <vector>\n' > "$work/engine/config/good.hpp"
printf '#pragma once\n#include "engine/config/good.hpp"\n#include "engine/sim/driver.hpp"\n' > "$work/engine/config/bad.hpp"
known="engine/core|engine/config|engine/sim"

check() {  # layer dir, allowed dirs
  "$cmake_bin" -DROOT="$work" -DLAYER_DIR="$1" -DALLOWED="$2" -DKNOWN="$known" \
    -P "$source_dir/cmake/check_layer.cmake" > "$work/out" 2>&1
}

if check engine/config "engine/config|engine/core"; then
  echo "an upward include (config -> sim) was not refused"; exit 1
fi
grep -q "engine/config/bad.hpp: includes engine/sim/driver.hpp" "$work/out" || { cat "$work/out"; exit 1; }
grep -q "good.hpp" "$work/out" && { echo "a downward include was reported"; cat "$work/out"; exit 1; }
rm "$work/engine/config/bad.hpp"
check engine/config "engine/config|engine/core" || { echo "a layer with only downward includes was refused"; cat "$work/out"; exit 1; }
# Each layer is checked against its own list: sim may include core.
printf '#include "engine/core/error.hpp"\n' > "$work/engine/sim/ok.cpp"
check engine/sim "engine/sim|engine/core" || { cat "$work/out"; exit 1; }
echo "layer check: upward include refused, downward includes accepted"
