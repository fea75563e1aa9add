#!/bin/bash
# Builds drift against the machine's CUDA torch wheel and times it beside plain PyTorch on the
# same GPU, in one call (docs/benchmarks.md#gpu). Run from the checkout's root on the GPU machine,
# after tools/gpu/prepare.sh filled .gpu/ on the development machine:
#   bash tools/gpu/bench.sh
# It writes $OUT/report.txt (the table), $OUT/runs.tgz (every run's timings.jsonl, metrics.jsonl,
# summary.json and log) and $OUT/logs.tgz (build and test logs); OUT defaults to ./gpu-out.
# DRIFT_GPU_BUDGET (seconds, default 420) bounds the whole: work past it is skipped and said so;
# the FedAU protocol at 2,000 rounds runs last, in what is left.
# DRIFT_GPU_PACKS=0 skips packed clients; DRIFT_GPU_SKC=0 skips FedSKC; DRIFT_GPU_STUDY=0 skips
# the FedAU study's subset (DRIFT_GPU_STUDY_ROUNDS, default 200, its rounds); DRIFT_GPU_FEDAU_SLOTS
# (default 8) sets the FedAU run's slots; DRIFT_GPU_FEDAU=0 skips it; DRIFT_GPU_ROUNDS (default 20)
# sets qs200's rounds. DRIFT_GPU_DEVICE=cpu DRIFT_GPU_BUILD=build DRIFT_GPU_ROUNDS=2 checks this
# script on the development machine.
set -u
ROOT=$(pwd); G=$ROOT/.gpu; OUT=${OUT:-$ROOT/gpu-out}; mkdir -p "$OUT"
R=$OUT/report.txt; : > "$R"
W=/tmp/drift-gpu; rm -rf $W; mkdir -p $W/runs $W/logs
BUDGET=${DRIFT_GPU_BUDGET:-420}; T0=$(date +%s)
DEV=${DRIFT_GPU_DEVICE:-cuda:0}; B=${DRIFT_GPU_BUILD:-/tmp/drift-gpu-build}
left() { echo $((BUDGET - ($(date +%s) - T0))); }
log() { echo "$@" | tee -a "$R"; }
finish() {
  (cd $W && tar czf "$OUT/runs.tgz" runs/*.log runs/*/timings.jsonl runs/*/metrics.jsonl runs/*/summary.json \
    runs/*/workers.log runs/study_*/*/seed-1/metrics.jsonl runs/study_*/*/seed-1/summary.json 2>/dev/null)
  (cd $W && tar czf "$OUT/logs.tgz" logs 2>/dev/null)
  log "total $(($(date +%s) - T0)) s"
}
trap finish EXIT

log "drift $(cat $G/commit 2>/dev/null || echo unknown), $(date -u +%F), device $DEV"
if [ "${DEV%%:*}" = cuda ]; then
  log "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader), cores $(nproc)"
  # Debian 12's packages of drift's dependencies, unpacked beside the image's own files.
  P=/tmp/debroot; mkdir -p $P
  for f in $G/debs/*.deb; do dpkg -x "$f" $P; done
  cp -an $P/. / 2>/dev/null; ldconfig
  PREFIX=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
  log "torch $(python3 -c 'import torch; print(torch.__version__, "cudnn", torch.backends.cudnn.version())'), g++ $(g++ -dumpversion)"
else
  PREFIX=""
fi

t=$(date +%s)
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release ${PREFIX:+-DCMAKE_PREFIX_PATH=$PREFIX} > $W/logs/cmake.log 2>&1 ||
  { tail -30 $W/logs/cmake.log | tee -a "$R"; exit 1; }
ninja -C $B drift drift_cuda_tests drift_bench_device_step > $W/logs/build.log 2>&1 ||
  { grep -m5 -A12 "error" $W/logs/build.log | tee -a "$R"; exit 1; }
log "build $(($(date +%s) - t)) s ($(grep -c "CUDA graphs" $W/logs/cmake.log) CUDA-graph line in cmake's output)"
D=$B/tools/drift
# A crash in a run writes its stack into the run's log (the machine has no debugger).
SHIM=$W/segv_backtrace.so
gcc -shared -fPIC -O1 tools/gpu/segv_backtrace.c -o $SHIM 2> /dev/null || SHIM=""

log "== cuda_training (graphs against eager, bit for bit; no host wait in a job's steps)"
timeout 300 $B/tests/drift_cuda_tests > $W/logs/cuda_tests.log 2>&1; rc=$?
log "cuda_training rc=$rc ($([ $rc = 0 ] && echo passed || ([ $rc = 77 ] && echo skipped || echo FAILED)))"
tail -4 $W/logs/cuda_tests.log | tee -a "$R"
[ $rc = 0 ] || [ $rc = 77 ] || grep -m8 -B2 -A8 "FAILED\|error" $W/logs/cuda_tests.log | head -60 | tee -a "$R"

summary() {  # one run directory -> one line
  python3 - "$1" <<'PY'
import hashlib, json, statistics, sys
d = sys.argv[1]
try:
    t = [json.loads(l) for l in open(d + "/timings.jsonl")]
    m = [json.loads(l) for l in open(d + "/metrics.jsonl")]
except Exception as e:
    print("  no result:", e); sys.exit()
later = t[1:] or t
last = t[-5:]
wall = statistics.median(x["round_seconds"] for x in later)
user = statistics.median(x["user_seconds"] for x in later)
last_wall = statistics.median(x["round_seconds"] for x in last)
last_user = statistics.median(x["user_seconds"] for x in last)
acc = [x["test_accuracy"] for x in m if x.get("test_accuracy") is not None]
train = statistics.median(x.get("train_seconds", 0) for x in later)
evals = statistics.median(x.get("eval_seconds", 0) for x in later)
digest = hashlib.sha256(open(d + "/metrics.jsonl", "rb").read()).hexdigest()[:12]
print("  %d rounds; s/round (2+) median %.4f [%.4f, %.4f] (training %.4f, evaluation %.4f); host user %.4f s/round "
      "(%.0f%% of wall); last 5 rounds: %.4f s/round, host user %.0f%%; last acc %s; metrics %s"
      % (len(t), wall, min(x["round_seconds"] for x in later), max(x["round_seconds"] for x in later), train, evals,
         user, 100 * user / wall if wall else 0, last_wall, 100 * last_user / last_wall if last_wall else 0,
         acc[-1] if acc else None, digest))
PY
}
digest() { sha256sum $W/runs/$1/metrics.jsonl 2>/dev/null | cut -c1-12; }
run() {  # run NAME SECONDS ARGS...: one drift run, bounded by its own limit and the budget
  local name=$1 limit=$2; shift 2
  local room=$(($(left) - 15))
  [ $room -gt 20 ] || { log "$name: skipped, budget spent"; return; }
  [ $limit -le $room ] || limit=$room
  local util=$W/logs/util_$name.txt upid="" s=$(date +%s.%N)
  if [ "${DEV%%:*}" = cuda ]; then
    nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 200 > $util 2>/dev/null &
    upid=$!
  fi
  DRIFT_PHASE_TIMES=1 ${SHIM:+env LD_PRELOAD=$SHIM} timeout $limit $D run "$@" --set data.path=$G/fmnist --no-plots --no-progress \
    --out $W/runs/$name > $W/runs/$name.log 2>&1
  local rc=$?
  [ -n "$upid" ] && kill $upid 2>/dev/null
  local busy=$(awk '$1>0{n++; s+=$1} END{if(NR) printf "GPU busy in %d%% of samples, mean %.0f%% when busy", 100*n/NR, n?s/n:0}' $util 2>/dev/null)
  log "$name rc=$rc wall $(python3 -c "print('%.1f' % ($(date +%s.%N) - $s))") s ${busy:+($busy)}"
  summary $W/runs/$name | tee -a "$R"
  # Where the host's time went (docs/performance.md#phase-times).
  sed -n '/phase times (DRIFT_PHASE_TIMES/,/done in/p' $W/runs/$name.log | grep -v "done in" | sed 's/^/  /' >> "$R"
  [ $rc = 0 ] || tail -4 $W/runs/$name.log | tee -a "$R"
  grep -A24 "fatal signal: backtrace" $W/runs/$name.log 2> /dev/null | c++filt | cut -c1-240 | tee -a "$R"
}
same() {  # same A B...: whether the runs wrote the same metrics.jsonl
  local first=$(digest $1) ok=yes
  for r in "$@"; do [ -n "$(digest $r)" ] && [ "$(digest $r)" = "$first" ] || ok=no; done
  log "metrics identical across $*: $ok"
}
slots() { [ "${DEV%%:*}" = cuda ] && echo "$DEV"x$1 || echo cpu:$1; }

# The FedAU study's subset (issue 70): its 7 methods under one pattern (bernoulli), seed 1, as
# one `drift study` on the device, every run at once (--jobs from the pool), then the same study
# one run at a time; runs per hour, and the 63 runs of the whole study (3 patterns x 3 seeds) at
# 2,000 rounds extrapolated from DRIFT_GPU_STUDY_ROUNDS (default 200) by rounds.
study() {  # study NAME SECONDS ARGS...: the subset as one drift study; prints its wall seconds
  local name=$1 limit=$2; shift 2
  local room=$(($(left) - 15))
  [ $room -gt 20 ] || { log "$name: skipped, budget spent"; return 1; }
  [ $limit -le $room ] || limit=$room
  local s=$(date +%s.%N)
  timeout $limit $D study scenarios/paper/fedau_fmnist.toml --seed-list 1 --algorithms "$METHODS" \
    --set data.path=$G/fmnist --set federation.rounds=$SR --no-plots --no-progress --out $W/runs/$name "$@" \
    > $W/runs/$name.log 2>&1
  local rc=$?
  STUDY_WALL=$(python3 -c "print('%.1f' % ($(date +%s.%N) - $s))")
  log "$name rc=$rc wall $STUDY_WALL s; $(grep -m1 '^study:' $W/runs/$name.log)"
  [ $rc = 0 ] || { tail -4 $W/runs/$name.log | tee -a "$R"; return 1; }
}
study_digests() { (cd $W/runs/$1 && sha256sum */seed-1/metrics.jsonl); }
study_row() {
  SR=${DRIFT_GPU_STUDY_ROUNDS:-200}
  METHODS=fedavg-participants+server_lr=1.78,fedavg-all+server_lr=10,known-probability,fedau,mifa,fedvarp,amplified-fedavg
  log "== the FedAU study's subset: 7 methods, bernoulli, seed 1, $SR rounds, as one drift study"
  study study_pool 300 --devices $(slots 1) || return
  local pool=$STUDY_WALL
  python3 -c "w=$pool; r=7*3600/w; print('  %.0f runs of %d rounds an hour; the 63 runs at 2,000 rounds: %.2f h' % (r, $SR, 63*(2000/$SR)/r))" | tee -a "$R"
  study study_serial 400 --devices $(slots 1) --jobs 1 || return
  python3 -c "w=$STUDY_WALL; print('  one run at a time: %.0f runs an hour (%.2fx slower than at once)' % (7*3600/w, w/$pool))" | tee -a "$R"
  if [ "$(study_digests study_pool)" = "$(study_digests study_serial)" ]; then
    log "metrics identical between the study at once and --jobs 1: yes"
  else
    log "metrics identical between the study at once and --jobs 1: no"
    diff <(study_digests study_pool) <(study_digests study_serial) | tee -a "$R"
  fi
}

QS="scenarios/quickstart.toml --set federation.clients=200 --set sampler.clients_per_round=40
  --set federation.rounds=${DRIFT_GPU_ROUNDS:-20}"
SKC="scenarios/quickstart.toml --set model.name=resnet8 --set model.width=16 --set algorithm.name=fedskc
  --set algorithm.preset=reference --set training.lr=0.1 --set training.momentum=0 --set federation.rounds=6
  --set partition.alpha=0.2"

log "== qs200: small CNN FedAvg, 200 clients, 40 a round, batch 64 (evaluation every round included)"
run qs_1 120 $QS --devices $(slots 1)
run qs_1_eager 120 $QS --devices $(slots 1) --set devices.graphs=false
same qs_1 qs_1_eager
log "== the same without an evaluation lane (devices.eval_lanes; a GPU has one by default)"
run qs_1_no_lane 120 $QS --devices $(slots 1) --set devices.eval_lanes=none
same qs_1 qs_1_no_lane
log "== one step's host time, by loop (drift_bench_device_step)"
timeout 120 $B/tools/bench/drift_bench_device_step $DEV 40 300 2>&1 | tee -a "$R"
run qs_2 120 $QS --devices $(slots 2)
run qs_4 120 $QS --devices $(slots 4)
run qs_8 120 $QS --devices $(slots 8)
same qs_1 qs_2 qs_4 qs_8
log "== the same slots, each in a worker process of its own (--slot-processes: a CUDA context each;"
log "   host user time is the coordinator's alone, the workers' is not counted)"
run qs_4_proc 120 $QS --devices $(slots 4) --slot-processes
run qs_8_proc 120 $QS --devices $(slots 8) --slot-processes
same qs_1 qs_4_proc qs_8_proc
if [ "${DEV%%:*}" = cuda ]; then
  log "== plain PyTorch on this GPU, the qs200 round (tools/gpu/limits.py)"
  PYTHONUNBUFFERED=1 timeout 120 python3 tools/gpu/limits.py 2>&1 | tee -a "$R"
fi
if [ "${DRIFT_GPU_PACKS:-1}" = 1 ]; then
  log "== packed clients: every step of a pack one shape (padded), replayed from a graph"
  run qs_1_pack40 120 $QS --devices $(slots 1) --set devices.pack=40
  run qs_1_pack40_eager 120 $QS --devices $(slots 1) --set devices.pack=40 --set devices.graphs=false
  same qs_1_pack40 qs_1_pack40_eager
  run qs_1_pack10 120 $QS --devices $(slots 1) --set devices.pack=10
  run qs_4_pack10 120 $QS --devices $(slots 4) --set devices.pack=10
  same qs_1_pack10 qs_4_pack10
fi
if [ "${DRIFT_GPU_SKC:-1}" = 1 ]; then
  log "== FedSKC reference, ResNet-8 width 16, 20 clients, 8 a round (its own loss, captured)"
  run skc_1 150 $SKC --devices $(slots 1)
  run skc_1_eager 150 $SKC --devices $(slots 1) --set devices.graphs=false
  run skc_2 150 $SKC --devices $(slots 2)
  run skc_4 150 $SKC --devices $(slots 4)
  run skc_4_proc 150 $SKC --devices $(slots 4) --slot-processes
  same skc_1 skc_1_eager skc_2 skc_4 skc_4_proc
fi
if [ "${DRIFT_GPU_STUDY:-1}" = 1 ]; then
  study_row
fi
[ "${DRIFT_GPU_FEDAU:-1}" = 1 ] || exit 0
log "== FedAU's protocol at the paper's 2,000 rounds (scenarios/paper/fedau_fmnist.toml, seed 1)"
run fedau_2000 600 scenarios/paper/fedau_fmnist.toml --set federation.rounds=2000 --devices $(slots ${DRIFT_GPU_FEDAU_SLOTS:-8})
