#!/usr/bin/env bash
# Runs the unit and integration test executables of a sanitizer build (make check-sanitize).
# A finding fails the run: ASan aborts at the first error, UBSan is built not to recover.
set -euo pipefail
build="$1"
here="$(cd "$(dirname "$0")" && pwd)"
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0"
for t in drift_unit_tests drift_integration_tests; do
  echo "== $t (ASan + UBSan)"
  start=$(date +%s)
  "$build/tests/$t" --order decl
  echo "== $t: passed in $(( $(date +%s) - start )) s"
done
