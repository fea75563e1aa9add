#!/bin/bash
# On the development machine, in drift's checkout: fills the ignored folder .gpu/ with what a GPU
# machine that has a CUDA torch wheel, g++, CMake and Ninja but no Debian packages and no network
# lacks: Debian 12's packages of drift's C++ dependencies (bench.sh unpacks them beside that
# machine's own files), Fashion-MNIST, and the commit being measured. Then, on the GPU machine,
# `bash tools/gpu/bench.sh` from the checkout's root (docs/benchmarks.md#gpu).
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
exclude=$(git rev-parse --git-path info/exclude)
grep -qx "/.gpu/" "$exclude" 2>/dev/null || echo "/.gpu/" >> "$exclude"
mkdir -p .gpu/debs .gpu/fmnist
if [ -z "$(ls .gpu/debs/*.deb 2>/dev/null)" ]; then
  (cd .gpu/debs && apt-get download \
    libcaf-dev libcaf-core0.17 libcaf-io0.17 libcaf-openssl0.17 libcapnp-dev libcapnp-0.9.2 capnproto \
    libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 libtomlplusplus-dev libtomlplusplus3 libcli11-dev \
    nlohmann-json3-dev libgoogle-perftools-dev libgoogle-perftools4 libtcmalloc-minimal4 libunwind8 \
    libpng-dev libpng16-16 zlib1g-dev libssl-dev catch2 libbenchmark-dev libbenchmark1debian >/dev/null 2>&1) ||
    { echo "prepare.sh: apt-get download failed" >&2; exit 1; }
fi
cp /usr/share/datasets/fashion-mnist/*.gz .gpu/fmnist/
# The GPU machine gets the working tree without .git: the report names the commit from here.
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!docs' || echo '+changes')" > .gpu/commit
du -sh .gpu
