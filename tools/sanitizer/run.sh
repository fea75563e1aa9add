#!/usr/bin/env bash
# Runs the unit and integration tests of a sanitizer build (make check-sanitize) through CTest,
# one process per test case as in `make test`; the shell-script tests (label `script`) need the
# drift executable, which this build leaves out, and the GPU test (label `gpu`) a CUDA LibTorch. ASan aborts at the first error and UBSan is
# built not to recover, so any finding fails its test.
set -euo pipefail
build="$1"
here="$(cd "$(dirname "$0")" && pwd)"
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0"
cd "$build"
ctest -j "$(nproc)" -LE "script|gpu" --output-on-failure --timeout 1800
