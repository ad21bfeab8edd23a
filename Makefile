# Thin wrapper over CMake. `make` builds, `make test` runs the test suite,
# `make run` runs the program's main job, `make bench` runs the benchmarks,
# `make gate` runs the instruction-count gate.
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

.PHONY: all deps configure test run bench gate gate-update fuzz clean

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

# The instruction-count regression gate (docs/performance.md): its own gcc
# Release build in build-gate/ (never $(BUILD): the counts belong to that
# compiler and build type), the workloads of bench/gate_workloads.c under
# callgrind, compared with bench/instruction-baseline.json. `make gate-update`
# rewrites the baseline.
gate: deps
	scripts/instruction-gate check --jobs $(JOBS)

gate-update: deps
	scripts/instruction-gate update --jobs $(JOBS)

# libFuzzer (clang, ASan + UBSan) on every parser of outside input, one
# harness after the other (tests/fuzz/fuzz_*.c), FUZZ_SECONDS each. Each
# starts from its committed corpus tests/fuzz/corpus/fuzz_<name> (the plan
# harness also from the bad-plan corpus and the shared plans); new inputs stay
# in build-fuzz/corpus/<name>, and a finding stops the run and is written as
# build-fuzz/artifacts/<name>-crash-* (or leak-, timeout-, oom-).
BL_SHARED_DIR ?= ../shared
FUZZ_SECONDS ?= 60
FUZZ_HARNESSES ?= plan inspect calibration npy args npz csv part
FUZZ_FLAGS ?= -timeout=10 -rss_limit_mb=2048
# The harnesses that write files (inspect, calibration, npy) run far faster
# on a memory file system.
FUZZ_TMPDIR ?= $(or $(wildcard /dev/shm),/tmp)
fuzz: deps
	@cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang \
	       -DCMAKE_CXX_COMPILER=clang++ -DBL_FUZZ=ON >/dev/null
	cmake --build build-fuzz -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_HARNESSES))
	@mkdir -p build-fuzz/artifacts
	@for h in $(FUZZ_HARNESSES); do \
	    mkdir -p build-fuzz/corpus/$$h; \
	    extra=; [ $$h = plan ] && extra="tests/plans/bad $(wildcard $(BL_SHARED_DIR)/plans)"; \
	    echo "fuzz_$$h: $(FUZZ_SECONDS) s"; \
	    TMPDIR=$(FUZZ_TMPDIR) build-fuzz/fuzz_$$h -max_total_time=$(FUZZ_SECONDS) $(FUZZ_FLAGS) \
	        -artifact_prefix=build-fuzz/artifacts/$$h- \
	        build-fuzz/corpus/$$h tests/fuzz/corpus/fuzz_$$h $$extra || exit 1; \
	done

clean:
	rm -rf $(BUILD)
