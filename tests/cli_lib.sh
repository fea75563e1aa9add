# Helpers shared by the cli_* tests; source it after setting $work (a scratch directory).

# expect_code CODE COMMAND...: runs COMMAND, fails the test unless it exits with CODE; its
# stdout goes to $work/last.out and its stderr to $work/last.err, for `says` to read.
expect_code() {
  local want=$1 code=0
  shift
  "$@" > "$work/last.out" 2> "$work/last.err" || code=$?
  [[ $code -eq $want ]] || { echo "expected exit $want, got $code from: $*"; cat "$work/last.err"; exit 1; }
}

# says TEXT: the last expect_code's stderr holds TEXT.
says() { grep -q -- "$1" "$work/last.err" || { echo "expected '$1' in:"; cat "$work/last.err"; exit 1; }; }

# same DIR_A DIR_B: two runs' deterministic files match byte for byte.
same() {
  for f in metrics.jsonl clients.csv participation.csv; do
    cmp "$1/$f" "$2/$f" || { echo "$f differs between $1 and $2"; exit 1; }
  done
}

# same_on_slots_and_resume RUN: the function RUN (drift run with the test's scenario, taking
# further flags) writes the same files on 1 and 2 slots, and on 2 slots stopped after aggregation
# 2 then resumed on 1. The runs stay in $work/one, $work/two and $work/resumed.
same_on_slots_and_resume() {
  local run=$1
  "$run" --slots 1 --out "$work/one" 2> /dev/null
  "$run" --slots 2 --out "$work/two" 2> /dev/null
  same "$work/one" "$work/two"
  expect_code 130 "$run" --slots 2 --out "$work/resumed" --stop-after 2
  "$drift" resume "$work/resumed" --no-progress --no-plots --slots 1 2> /dev/null
  same "$work/one" "$work/resumed"
}
