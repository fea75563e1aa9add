#!/usr/bin/env bash
# The actors' protocols are checked by the compiler (actors/protocols.hpp): the right messages
# compile, and each kind of misuse (a message the interface does not list, a reply handler of
# the wrong shape, a narrowed handle used beyond its view) is refused with CAF's typed check.
set -euo pipefail
cxx="$1"
source_dir="$2"
includes=()
IFS=';' read -r -a dirs <<< "${3:-}"
for d in "${dirs[@]}"; do [ -n "$d" ] && includes+=("-I$d"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

compile() {  # misuse number
  "$cxx" -std=c++17 -fsyntax-only -I"$source_dir" "${includes[@]}" -DDRIFT_MISUSE="$1" \
    "$source_dir/tests/protocol/protocol_use.cpp" > "$work/out" 2>&1
}

compile 0 || { echo "the protocols' correct use does not compile:"; head -40 "$work/out"; exit 1; }
expect_refused() {  # misuse number, what the compiler must say
  if compile "$1"; then echo "misuse $1 compiled"; exit 1; fi
  grep -q "$2" "$work/out" || { echo "misuse $1 failed for another reason:"; grep error "$work/out" | head -5; exit 1; }
}
expect_refused 1 "response_type<"               # a task sent to a trainer slot
expect_refused 2 "wrong functor signature"      # an evaluation's reply taken as an update and a state
expect_refused 3 "response_type<"               # a job sent through the gatekeeper's view of the pool
echo "protocol check: correct use compiles; 3 misuses refused"
