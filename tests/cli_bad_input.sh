#!/usr/bin/env bash
# Every kind of bad input gets one clear line on stderr, exit code 2, and no run directory.
set -u
drift="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

# scenario NAME EXTRA_TOML: writes a small valid scenario plus EXTRA_TOML.
scenario() {
  cat > "$work/$1.toml" <<TOML
[output]
runs_dir = "$work/runs"
$2
TOML
  echo "$work/$1.toml"
}

# expect NAME WANT ARGS...: drift ARGS must fail with code 2 and one line containing WANT.
expect() {
  local name="$1" want="$2"
  shift 2
  local err code lines
  err=$("$drift" "$@" 2>&1 >/dev/null)
  code=$?
  lines=$(printf '%s\n' "$err" | wc -l)
  if [[ $code -eq 2 && "$err" == *"$want"* && $lines -eq 1 && ! -e "$work/runs" && ! -e "$work/out" ]]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name: exit $code, $lines line(s): $err"
    [[ -e "$work/runs" || -e "$work/out" ]] && echo "  ... and a run directory was created"
  fi
}

expect unknown-key "did you mean 'training.lr'" run "$(scenario unknown-key $'[training]\nlrr = 0.1')"
expect wrong-type "training.batch_size must be an integer, not string" run "$(scenario wrong-type $'[training]\nbatch_size = "big"')"
expect alpha-zero "partition.alpha must be > 0, got 0" run "$(scenario alpha $'[partition]\nalpha = 0.0')"
expect fraction-above-one "sampler.fraction must be <= 1, got 1.5" run "$(scenario fraction $'[sampler]\nfraction = 1.5')"
expect zero-rounds "federation.rounds must be >= 1, got 0" run "$(scenario rounds $'[federation]\nrounds = 0')"
expect unknown-algorithm "unknown algorithm 'fedsgd'" run "$(scenario algorithm $'[algorithm]\nname = "fedsgd"')"
expect unknown-dataset "unknown dataset 'imagenet'" run "$(scenario dataset $'[data]\ndataset = "imagenet"')"
expect cifar-without-files "download the binary version from https://www.cs.toronto.edu/~kriz/cifar.html" run "$(scenario cifar $'[data]\ndataset = "cifar10"\npath = "/nonexistent/cifar"')"
expect missing-dataset-file "dataset-fashion-mnist" run "$(scenario missing $'[data]\npath = "/nonexistent/fmnist"')"
expect infeasible-partition "min_client_samples" run "$(scenario infeasible $'[data]\nmax_train_samples = 100\n[partition]\nmin_client_samples = 50')"
expect bad-set "--set federation.rounds: federation.rounds must be >= 1" run "$(scenario set '')" --set federation.rounds=0
expect join-timeout "a number of seconds from 0 to 1e9, not -1" run "$(scenario join '')" --join-timeout -1
expect set-typo "did you mean 'federation.clients'" run "$(scenario typo '')" --set federation.client=5
expect missing-scenario "cannot open scenario file" run "$work/nope.toml"
expect toml-syntax "syntax.toml:3" run "$(scenario syntax $'[federation\nrounds = 3')"
expect validate-too "partition.alpha must be > 0" validate "$(scenario validate $'[partition]\nalpha = -1')"
expect bad-device "unknown device 'gpu:0'" run "$(scenario device '')" --devices gpu:0
expect device-conflict "set devices.cpu_slots or devices.pool, not both" run "$(scenario conflict $'[devices]\ncpu_slots = 2\npool = "cpu:2"')"
expect bad-partition-file "cannot open partition file" run "$(scenario pfile $'[partition]\nscheme = "file"\nfile = "none.json"')"
# On a CPU-only LibTorch (Debian's), asking for a GPU is refused before anything runs.
if "$drift" validate "$(scenario probe '')" --set 'devices.pool="cuda:0"' > /dev/null 2>&1; then
  echo "(CUDA available: skipping the CPU-only refusal check)"
else
  expect cuda-without-cuda "LibTorch without CUDA" run "$(scenario cuda '')" --devices cuda:0x4
fi
# Hostile values (issue 16): a name is a name, not a path; no value wraps, overflows or is infinite.
expect name-path "contains a path separator" run "$(scenario name-path '')" --set 'name="../../victim"'
expect name-absolute "contains a path separator" run "$(scenario name-abs '')" --set 'name="/tmp/drift-victim"'
expect name-dots "is not a name" run "$(scenario name-dots '')" --set 'name=".."'
expect name-empty "name is empty" run "$(scenario name-empty '')" --set 'name=""'
expect name-long "longer than 100 bytes" run "$(scenario name-long '')" --set "name=\"$(printf 'x%.0s' {1..5000})\""
expect every-wraps "evaluation.every must be <= 2147483647, got 4294967296" run "$(scenario every $'[evaluation]\nevery = 4294967296')"
expect alpha-inf "partition.alpha must be a finite number, not inf" run "$(scenario alpha-inf $'[partition]\nalpha = inf')"
expect buffer-huge "async.buffer_size must be <= 1000000" run "$(scenario buffer $'[async]\nbuffer_size = 9223372036854775807')"
python3 -c "print('a' + '.a' * 40000 + ' = 1')" > "$work/deep.toml"
expect deep-key "a key nested more than 32 levels deep" run "$work/deep.toml"
python3 -c "print('[' + '.'.join(['a'] * 40000) + ']')" > "$work/deep-header.toml"
expect deep-header "a key nested more than 32 levels deep" run "$work/deep-header.toml"
expect huge-integer-number "is too large to be used exactly" run "$(scenario huge-speed $'[profile]\nspeed = 9223372036854775807')"
expect shards-huge "cannot cut" run "$(scenario shards $'[data]\nmax_train_samples = 600\n[partition]\nscheme = "shards"\nshards_per_client = 2000000000')"
expect batch-no-step "no client would take a step" run "$(scenario nostep $'[data]\nmax_train_samples = 600\n[training]\nbatch_size = 100000\ndrop_last = true')"
expect set-newline "the value spans several lines" run "$(scenario newline '')" --set $'training.lr=0.1\nfoo=2'
mkdir -p "$work/taken" && touch "$work/taken/file"
expect out-not-empty "already exists and is not empty" run "$(scenario taken '')" --out "$work/taken"

expect no-generator "has no readable generator.json" check-generator "$work/no-such-generator"
mkdir -p "$work/generator" && echo '{"latent_dim": 3, "resolution": 4, "mapping": false}' > "$work/generator/generator.json"
expect no-synthesis "synthesis.pt is missing" check-generator "$work/generator"
# Multi-node flags without a coordinator, and workers without what they need.
expect workers-alone "need --listen HOST:PORT" run "$(scenario workers '')" --workers 2
expect listen-plain "off loopback needs --tls" run "$(scenario plain '')" --listen 0.0.0.0:0 --workers 1
DRIFT_JOIN_TOKEN=0123456789abcdef0123 expect bad-connect "--connect '127.0.0.1:0': port 0 is only for listening" \
  worker --connect 127.0.0.1:0
DRIFT_JOIN_TOKEN=0123456789abcdef0123 expect worker-cuda "cuda:0" worker --connect 127.0.0.1:9 --devices cuda:0
# Messages that say what was written (issue 48): an invalid TOML escape in --set, a negative
# seed, a client id too large for a double to print.
expect set-escape "not a TOML value (Error while parsing string: escape sequence" \
  validate "$(scenario escape '')" --set 'name="a\xffb"'
expect seed-list "a seed is a whole number from 0 to 2^63 - 1, not -1" \
  study "$(scenario seeds '')" --grid training.lr=0.1 --seed-list -1 --out "$work/out"
printf 'client,start,end\n9223372036854775807,0,10\n' > "$work/big-id.csv"
expect trace-id "client 9223372036854775807 is not a client id" trace-info "$work/big-id.csv"

echo "cli bad input: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
