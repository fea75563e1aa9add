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

# Waits (up to a minute) until $1/index.html is a live page.
wait_for_live() {
  for _ in $(seq 600); do
    grep -qs 'http-equiv="refresh"' "$1/index.html" && return 0
    sleep 0.1
  done
  echo "$1: no live page within a minute"; exit 1
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
"$drift" study "$work/tiny.toml" --algorithms fedavg,fedprox --seeds 2 --jobs 1 --set federation.rounds=20 \
  --out "$work/study" --no-progress > /dev/null 2> "$work/study.log" &
pid=$!
for _ in $(seq 600); do  # until a first run has finished and the page shows it
  grep -qs 'Running: [1-3] of 4 runs finished' "$work/study/index.html" && break
  sleep 0.1
done
snapshot "$work/study"
kill -0 "$pid" || { echo "the study ended before its live page could be checked"; exit 1; }
grep -Eq 'Running: [1-3] of 4 runs finished \([0-9]+ %\), drawn at' "$work/snap/index.html" ||
  { echo "the study's live page does not say how far it is"; grep -o '<p class="live"[^<]*' "$work/snap/index.html"; exit 1; }
open_in_browser "$work/snap/index.html" "runs finished"
wait "$pid" || { cat "$work/study.log"; exit 1; }
check_final "$work/study"
for r in "$work"/study/*/seed-*/; do check_final "$r"; done
echo "cli live pages: 1 passed, 0 failed"
