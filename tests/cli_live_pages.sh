#!/usr/bin/env bash
# Live pages: while a run or a study goes on, its index.html and figures are redrawn
# (output.plot_minutes), the page reloads itself and says how far things are, and the final
# drawing replaces it; an interrupted run's page stops reloading and says so. The live pages
# are opened in headless Chromium in the middle of a run and of a study.
set -euo pipefail
drift="$1"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2> /dev/null || true; wait 2> /dev/null || true; rm -rf "$work"' EXIT
if ! command -v gnuplot > /dev/null; then
  echo "cli live pages: skipped: no gnuplot (tools/install-deps.sh installs it)"
  exit 77
fi
browser=$(command -v chromium || command -v chromium-browser || true)
cat > "$work/tiny.toml" << 'TOML'
name = "live"
[data]
max_train_samples = 1200
max_test_samples = 400
[federation]
clients = 4
rounds = 150
[sampler]
fraction = 0.5
[output]
plot_minutes = 0.01
TOML

# Waits (up to three minutes) until $1/index.html is a live page with figures (a page drawn
# before the first aggregation has none yet: a slower LibTorch can take longer than one period
# to it, and drawings at nice 10 wait for idle cores).
wait_for_live() {
  for _ in $(seq 1800); do
    grep -qs 'http-equiv="refresh"' "$1/index.html" && grep -qs 'live-figures-[12]' "$1/index.html" && return 0
    sleep 0.1
  done
  echo "$1: no live page with figures within three minutes"; exit 1
}
# Copies the live page and the figures it shows, so the next drawings cannot change them under
# the browser.
snapshot() {
  rm -rf "$work/snap" && mkdir "$work/snap"
  cp "$1/index.html" "$work/snap/"
  local figures
  figures=$(grep -o 'live-figures-[12]' "$work/snap/index.html" | head -n 1)
  [[ -n "$figures" ]] || { echo "$1: the live page shows no figures"; cat "$work/snap/index.html"; exit 1; }
  cp -r "$1/$figures" "$work/snap/"
}
# Every image of the page loads, as a browser shows it.
open_in_browser() {
  [[ -n "$browser" ]] || return 0
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --allow-file-access-from-files \
    --virtual-time-budget=3000 --dump-dom "file://$1" > "$work/dom" 2> /dev/null
  grep -q 'data-broken-images="0"' "$work/dom" || { echo "$1: some image did not load"; grep -o '<body[^>]*>' "$work/dom"; exit 1; }
  grep -q 'data-images="[1-9]' "$work/dom" || { echo "$1: no images"; exit 1; }
  grep -q "$2" "$work/dom" || { echo "$1: the browser shows no '$2'"; exit 1; }
}
# The final page: no reloading, no live line, figures/ and no live folders.
check_final() {
  ! grep -q 'http-equiv="refresh"\|id="live"' "$1/index.html" || { echo "$1: the final page is still live"; exit 1; }
  [[ -f "$1/figures/accuracy.png" || -f "$1/figures/accuracy_by_round.png" ]] || { echo "$1: no final figures"; exit 1; }
  ! ls -d "$1"/live-figures-* 2> /dev/null || { echo "$1: live figure folders left behind"; exit 1; }
}

# A run: live while it trains, final at the end.
"$drift" run "$work/tiny.toml" --out "$work/run" --set federation.rounds=60 --no-progress 2> "$work/run.log" &
pid=$!
wait_for_live "$work/run"
snapshot "$work/run"
kill -0 "$pid" || { echo "the run ended before its live page could be checked"; exit 1; }
grep -Eq 'Running: aggregation [0-9]+ of 60 \([0-9]+ %\), drawn at' "$work/snap/index.html"
grep -q 'content="10"' "$work/snap/index.html"  # 0.6 s between drawings: reloads every 10 s
open_in_browser "$work/snap/index.html" "Running: aggregation"
wait "$pid" || { cat "$work/run.log"; exit 1; }
check_final "$work/run"
grep -qi "best accuracy" "$work/run/index.html"

# An interrupted run: its last live page stays, no longer reloading, and says how to go on.
"$drift" run "$work/tiny.toml" --out "$work/stopped" --no-progress 2> "$work/stopped.log" &
pid=$!
wait_for_live "$work/stopped"
kill -INT "$pid"
if wait "$pid"; then echo "an interrupted run exited 0"; exit 1; fi
! grep -q 'http-equiv="refresh"' "$work/stopped/index.html" || { echo "the interrupted run's page still reloads"; exit 1; }
grep -q "Interrupted; drift resume $work/stopped continues the run" "$work/stopped/index.html"

# A study of four runs, one at a time: its page is live in the middle of the study.
"$drift" study "$work/tiny.toml" --algorithms fedavg,fedprox --seeds 2 --jobs 1 --set federation.rounds=10 \
  --out "$work/study" --no-progress > /dev/null 2> "$work/study.log" &
pid=$!
for _ in $(seq 600); do  # until a first run has finished and the page shows it
  grep -qs 'Running: [1-3] of 4 runs finished' "$work/study/index.html" && break
  sleep 0.1
done
snapshot "$work/study"
kill -0 "$pid" || { echo "the study ended before its live page could be checked"; exit 1; }
grep -Eq 'Running: [1-3] of 4 runs finished \([0-9]+ %\), drawn at [0-9:]+; 1 at once on each scenario.s devices\.' \
  "$work/snap/index.html" ||
  { echo "the study's live page does not say how far it is"; grep -o '<p class="live"[^<]*' "$work/snap/index.html"; exit 1; }
open_in_browser "$work/snap/index.html" "runs finished"
wait "$pid" || { cat "$work/study.log"; exit 1; }
check_final "$work/study"
for r in "$work"/study/*/seed-*/; do check_final "$r"; done
# A study with its live page, interrupted by SIGINT or SIGTERM while a run trains: the drawing
# thread must not take the signal (it ended the process outright, issue 48), so the study exits
# 130 or 143, its running run stops at a checkpoint, and the same command resumes it to the
# uninterrupted study's bits.
# A page every 5 minutes: the drawing thread is there, and the runs do not wait for its drawings.
study_args=(study "$work/tiny.toml" --grid training.lr=0.05,0.1 --seeds 1 --jobs 1 --slots 1 --no-progress
  --set federation.rounds=16 --set output.plot_minutes=5)
"$drift" "${study_args[@]}" --out "$work/whole" --no-plots > /dev/null 2> "$work/whole.log"
for sig in INT TERM; do
  out="$work/cut-$sig"
  # Job control on, so that the signal is not ignored as it is for a background command.
  (set -m; "$drift" "${study_args[@]}" --out "$out" > /dev/null 2> "$work/cut-$sig.log" & echo $! > "$work/pid"; wait $!) &
  sub=$!
  for _ in $(seq 600); do  # until the first run has trained a few rounds
    [[ -f "$work/pid" ]] && [[ $(cat "$out"/training.lr=0.05/seed-1/metrics.jsonl 2> /dev/null | wc -l) -ge 3 ]] && break
    sleep 0.1
  done
  kill -$sig "$(cat "$work/pid")"
  rc=0
  wait $sub || rc=$?
  [[ $rc == $([[ $sig == INT ]] && echo 130 || echo 143) ]] || { echo "SIG$sig: the study exited $rc"; exit 1; }
  grep -q "interrupted: run the same command again" "$work/cut-$sig.log" || { cat "$work/cut-$sig.log"; exit 1; }
  python3 -c "import json,sys; s=json.load(open(sys.argv[1])); assert s['status'] == 'interrupted', s['status']" \
    "$out/training.lr=0.05/seed-1/summary.json"
  "$drift" "${study_args[@]}" --out "$out" > /dev/null 2>> "$work/cut-$sig.log" || { cat "$work/cut-$sig.log"; exit 1; }
  for cell in training.lr=0.05 training.lr=0.1; do
    cmp "$work/whole/$cell/seed-1/metrics.jsonl" "$out/$cell/seed-1/metrics.jsonl"
  done
  rm -f "$work/pid"
done
echo "cli live pages: 1 passed, 0 failed"
