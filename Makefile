# Thin wrapper over CMake. `make` builds, `make test` runs the test suite,
# `make run` runs the program's main job, `make bench` runs the benchmarks.
# Knobs: BUILD (build dir), BUILD_TYPE, CC, SANITIZE=1, WERROR=1.
BUILD      ?= build
BUILD_TYPE ?= Release
SANITIZE   ?= 0
WERROR     ?= 0
# The C++ compiler of the one C++ file (src/plan/toml_bridge.cpp) follows CC,
# so a clang build is clang throughout (sanitizer runtimes must match).
ifeq ($(CC),clang)
CXX := clang++
endif
CMAKE_FLAGS = -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCMAKE_C_COMPILER=$(CC) \
              -DCMAKE_CXX_COMPILER=$(CXX) \
              -DBL_SANITIZE=$(if $(filter 1,$(SANITIZE)),ON,OFF) \
              -DBL_WERROR=$(if $(filter 1,$(WERROR)),ON,OFF)
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps configure test run bench fuzz clean

all: deps configure
	cmake --build $(BUILD) -j $(JOBS)

deps:
	@scripts/install-deps

configure:
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null

test: deps configure
	cmake --build $(BUILD) -j $(JOBS)
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The main job: run the example plan into a new record under $(BUILD)/records.
# Standard output says where the record is and whether it is complete
# ({"record": ..., "status": ...}); the one-line-per-target summary goes to
# the terminal on standard error. `brainlesslab inspect <record>` verifies it.
# Only the program is built (and the library it links), not the tests.
run: deps configure
	cmake --build $(BUILD) -j $(JOBS) --target brainlesslab
	$(BUILD)/brainlesslab run plans/quick-start.toml --root $(BUILD)/records

bench: deps configure
	cmake --build $(BUILD) -j $(JOBS) --target bl_bench
	@# Only the benchmarks the sources define, never a stale binary left in $(BUILD).
	@for s in bench/bench_*.c; do "$(BUILD)/$$(basename "$$s" .c)" || exit 1; done
	@if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then /usr/bin/python3 bench/reference_rates.py; fi

# 60 s of libFuzzer on the plan boundary (tests/fuzz/fuzz_plan.c), seeded
# with the bad-plan corpus and the shared plans; new inputs it finds stay in
# build-fuzz/corpus, crashes are written as crash-* files in the project root.
BL_SHARED_DIR ?= ../shared
fuzz: deps
	@cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang \
	       -DCMAKE_CXX_COMPILER=clang++ -DBL_FUZZ=ON >/dev/null
	cmake --build build-fuzz -j $(JOBS) --target fuzz_plan
	@mkdir -p build-fuzz/corpus
	build-fuzz/fuzz_plan -max_total_time=60 -timeout=10 build-fuzz/corpus tests/plans/bad \
	    $(wildcard $(BL_SHARED_DIR)/plans)

clean:
	rm -rf $(BUILD)
