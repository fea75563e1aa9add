#!/usr/bin/env bash
# Fails if a tracked C++ source differs from what clang-format makes of it (.clang-format:
# Google's layout, 120 columns). `tools/check-format.sh --fix` rewrites them in place.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t sources < <(git ls-files '*.cpp' '*.hpp' '*.h')
if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i "${sources[@]}"
  exit 0
fi
if ! clang-format --dry-run -Werror "${sources[@]}"; then
  echo "check-format: the files above are not formatted; tools/check-format.sh --fix formats them"
  exit 1
fi
echo "check-format: ${#sources[@]} sources formatted"
