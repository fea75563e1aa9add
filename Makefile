# drift: the two commands a user needs, plus the developer's extras.
#   make quickstart   install what is missing, build, run scenarios/quickstart.toml
#   make test         install what is missing, build, run the whole test suite
#   make bench        build and run the benchmarks (timings as ratios against a baseline)
#   make check-sanitize  the tests under ASan + UBSan;  make fuzz  every fuzz target (one clang build)
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
CMAKE_ARGS ?=
# tools/install-deps.sh's flags: --tests leaves out the other checks' tools (CI's Debian 13 pass).
DEPS_FLAGS ?=

# ccache is looked up when configuring (after deps may have installed it). The generated
# Cap'n Proto headers live under the build dir: hash relative paths so that a fresh clone in
# another folder still hits the cache.
export CCACHE_BASEDIR := $(abspath ..)
export CCACHE_NOHASHDIR := 1
# The shared LibTorch PCH (cmake/torch_pch.cmake) is cacheable only with these relaxations.
export CCACHE_SLOPPINESS := pch_defines,time_macros,include_file_mtime,include_file_ctime

SANITIZE_DIR ?= build-sanitize
FUZZ_SECONDS ?= 600

# The tests compare bits recorded on other machines (scenario_digests) and across slots and
# processes. OpenBLAS, ATen and oneDNN (LibTorch's convolutions) choose their kernels by the
# CPU's instructions, and AVX-512 kernels round differently from AVX2 ones, so the tests pin
# the AVX2 kernels, which every x86-64 machine drift supports has (docs/outputs.md#machines).
test check-sanitize: export OPENBLAS_CORETYPE := Haswell
test check-sanitize: export ATEN_CPU_CAPABILITY := avx2
test check-sanitize: export ONEDNN_MAX_CPU_ISA := AVX2

# The container image (Containerfile), with podman or docker, whichever is present:
#   make image                        Debian 12, localhost/drift:debian12
#   make image IMAGE_DEBIAN=trixie    Debian 13, localhost/drift:debian13
# IMAGE_TOOL_FLAGS and IMAGE_FLAGS pass options to the tool and to its build (on machines where
# podman cannot use systemd's cgroups or run containers: IMAGE_TOOL_FLAGS=--cgroup-manager=cgroupfs
# IMAGE_FLAGS=--isolation=chroot). `make image-archive` writes the image as drift-TAG.tar, which
# `apptainer build drift.sif docker-archive:drift-debian12.tar` turns into a cluster image.
IMAGE_DEBIAN ?= bookworm
IMAGE_NAME ?= $(if $(filter trixie,$(IMAGE_DEBIAN)),debian13,debian12)
IMAGE_TOOL ?= $(shell command -v podman >/dev/null 2>&1 && echo podman || echo docker)
IMAGE_TOOL_FLAGS ?=
IMAGE_FLAGS ?=

.PHONY: all deps configure build quickstart test bench sanitize-configure check-sanitize fuzz check-network clean image image-archive

all: build

deps:
	@tools/install-deps.sh $(DEPS_FLAGS)
	@tools/fetch-digits.sh

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  $$(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) $(CMAKE_ARGS)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

quickstart: build
	$(BUILD_DIR)/tools/drift run scenarios/quickstart.toml

# CTEST_ARGS narrows the run, as CI's Debian 13 pass does (-L core: docs/development.md#what-ci-checks).
test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 600 $(CTEST_ARGS)

BENCHES := drift_bench_codec drift_bench_overhead drift_bench_scheduling drift_bench_roundtrip drift_bench_checkpoint drift_bench_packing \
  drift_bench_bare_loop drift_bench_bare_loop_system drift-system-malloc

bench: build
	cmake --build $(BUILD_DIR) -j $(JOBS) --target $(BENCHES)
	$(BUILD_DIR)/tools/bench/drift_bench_codec
	$(BUILD_DIR)/tools/bench/drift_bench_overhead
	$(BUILD_DIR)/tools/bench/drift_bench_scheduling
	$(BUILD_DIR)/tools/bench/drift_bench_roundtrip
	$(BUILD_DIR)/tools/bench/drift_bench_checkpoint
	$(BUILD_DIR)/tools/bench/drift_bench_packing
	tools/bench/bench_checkpoint.sh $(BUILD_DIR)/tools/drift
	tools/bench/bench_cluster.sh $(BUILD_DIR)/tools/drift
	tools/bench/bench_private_memory.sh $(BUILD_DIR)/tools/drift
	tools/bench/bench_pack_rounds.sh $(BUILD_DIR)/tools/drift
	tools/bench/bench_allocator.sh $(BUILD_DIR)
	tools/bench/bench_live_pages.sh $(BUILD_DIR)/tools/drift
	tools/bench/bench_torchscript.sh $(BUILD_DIR)/tools/drift $(BUILD_DIR)/tools/script_modules/write_script_module
	tools/bench/bench_exported.sh $(BUILD_DIR)/tools/drift

# One instrumented build (clang, $(SANITIZE_DIR)) serves both of the next two targets: every
# file is compiled with AddressSanitizer + UndefinedBehaviorSanitizer and libFuzzer's coverage
# (-DDRIFT_FUZZ=ON), at -O1 with line tables, so that a finding names the line. CI runs both
# in a row, and the second builds only what the first left out (docs/development.md#sanitizers-and-fuzzing).
sanitize-configure: deps
	CC=clang CXX=clang++ cmake -S . -B $(SANITIZE_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" -DDRIFT_FUZZ=ON -DDRIFT_BUILD_BENCH=OFF \
	  $$(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) $(CMAKE_ARGS)

# The unit and integration tests under the sanitizers. Suppressions, each with its reason, are
# in tools/sanitizer/.
check-sanitize: sanitize-configure
	cmake --build $(SANITIZE_DIR) -j $(JOBS) --target drift_unit_tests drift_integration_tests
	tools/sanitizer/run.sh $(SANITIZE_DIR)

# Every libFuzzer target (or those in FUZZ_TARGETS) for FUZZ_SECONDS each (default 600; CI runs
# 10), from the seed corpus in tools/fuzz/corpus/; what it learns stays in
# $(SANITIZE_DIR)/corpus/. A finding fails the target and leaves the input that triggers it in
# $(SANITIZE_DIR)/findings/.
fuzz: sanitize-configure
	cmake --build $(SANITIZE_DIR) -j $(JOBS) --target fuzz_targets
	tools/fuzz/run.sh $(SANITIZE_DIR) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Multi-node runs between network namespaces whose links fail (as root; about 3 minutes; not in
# CI): tests/net/check_network.sh prints a table of the cases (docs/devices.md#faults-across-hosts).
check-network: build
	tests/net/check_network.sh $(BUILD_DIR)/tools/drift

clean:
	rm -rf $(BUILD_DIR) $(SANITIZE_DIR)

image:
	$(IMAGE_TOOL) $(IMAGE_TOOL_FLAGS) build $(IMAGE_FLAGS) --build-arg DEBIAN=$(IMAGE_DEBIAN) \
	  -t localhost/drift:$(IMAGE_NAME) -f Containerfile .

image-archive: image
	rm -f drift-$(IMAGE_NAME).tar
	$(IMAGE_TOOL) $(IMAGE_TOOL_FLAGS) save --format docker-archive -o drift-$(IMAGE_NAME).tar localhost/drift:$(IMAGE_NAME)
