# warden — see README.md. Every target runs the cached, idempotent set-up first.
WARDEN_HOME ?= $(HOME)/.cache/warden
export WARDEN_HOME
JOBS ?= $(shell nproc)
# Extra arguments for `make serve`, e.g. make serve ARGS="--port 9000"
ARGS ?=

.PHONY: all setup serve test test-release test-asan bench clean

all: setup

setup:
	@scripts/setup

serve: setup
	@exec build/app/warden serve $(ARGS)

# The whole suite twice: the Release build, then an ASan+UBSan build of the same code.
test: setup test-release test-asan

test-release:
	@echo "[test] Release build: unit, integration and end-to-end tests"
	@ctest --test-dir build --output-on-failure --timeout 900

test-asan:
	@echo "[test] ASan+UBSan build"
	@cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" \
	  -DWARDEN_SANITIZE=ON -DWARDEN_BUILD_BENCH=OFF >/dev/null
	@cmake --build build-asan -j $(JOBS)
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir build-asan --output-on-failure --timeout 900

bench: setup
	@$(WARDEN_HOME)/venv/bin/python bench/run_bench.py --warden build/app/warden
	@$(WARDEN_HOME)/venv/bin/python bench/approval_bench.py --warden build/app/warden --streams 10000
	@$(WARDEN_HOME)/venv/bin/python bench/anthropic_bench.py --warden build/app/warden
	@build/bench/sandbox_bench 40
	@build/bench/request_guard_bench 2000

clean:
	rm -rf build build-asan
