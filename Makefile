# Thin wrapper over CMake. `make` builds, `make test` runs the test suite,
# `make run` runs the program's main job, `make bench` runs the benchmarks.
# Knobs: BUILD (build dir), BUILD_TYPE, CC, SANITIZE=1, WERROR=1.
BUILD      ?= build
BUILD_TYPE ?= Release
SANITIZE   ?= 0
WERROR     ?= 0
CMAKE_FLAGS = -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCMAKE_C_COMPILER=$(CC) \
              -DBL_SANITIZE=$(if $(filter 1,$(SANITIZE)),ON,OFF) \
              -DBL_WERROR=$(if $(filter 1,$(WERROR)),ON,OFF)
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps configure test run bench clean

all: deps configure
	cmake --build $(BUILD) -j $(JOBS)

deps:
	@scripts/install-deps

configure:
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null

test: deps configure
	cmake --build $(BUILD) -j $(JOBS)
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

run: deps all
	$(BUILD)/brainlesslab --version

bench: deps configure
	cmake --build $(BUILD) -j $(JOBS) --target bl_bench
	@for b in $(BUILD)/bench_*; do [ -x "$$b" ] && "$$b" || exit 1; done
	@if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then /usr/bin/python3 bench/reference_rates.py; fi

clean:
	rm -rf $(BUILD)
