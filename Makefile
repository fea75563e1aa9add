# drift: the two commands a user needs, plus the developer's extras.
#   make quickstart   install what is missing, build, run scenarios/quickstart.toml
#   make test         install what is missing, build, run the whole test suite
#   make bench        build and run the benchmarks (timings as ratios against a baseline)
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
CMAKE_ARGS ?=

# ccache is looked up when configuring (after deps may have installed it). The generated
# Cap'n Proto headers live under the build dir: hash relative paths so that a fresh clone in
# another folder still hits the cache.
export CCACHE_BASEDIR := $(abspath ..)
export CCACHE_NOHASHDIR := 1

.PHONY: all deps configure build quickstart test bench clean

all: build

deps:
	@tools/install-deps.sh
	@tools/fetch-digits.sh

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  $$(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) $(CMAKE_ARGS)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

quickstart: build
	$(BUILD_DIR)/tools/drift run scenarios/quickstart.toml

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 600

bench: build
	$(BUILD_DIR)/tools/bench/drift_bench_codec
	$(BUILD_DIR)/tools/bench/drift_bench_overhead
	$(BUILD_DIR)/tools/bench/drift_bench_scheduling
	$(BUILD_DIR)/tools/bench/drift_bench_roundtrip
	tools/bench/bench_cluster.sh $(BUILD_DIR)/tools/drift
	tools/bench/bench_private_memory.sh $(BUILD_DIR)/tools/drift

clean:
	rm -rf $(BUILD_DIR)
