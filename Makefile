# warden — see README.md. Every target runs the cached, idempotent set-up first.
WARDEN_HOME ?= $(HOME)/.cache/warden
export WARDEN_HOME
JOBS ?= $(shell nproc)
# Extra arguments for `make serve`, e.g. make serve ARGS="--port 9000"
ARGS ?=
# Seconds each fuzz harness runs in `make fuzz`
FUZZ_SECONDS ?= 600
# ... or until this many executions when > 0 (whichever comes first)
FUZZ_RUNS ?= 0
# Seconds of `make soak` (after its warm-up), and its concurrent clients
SOAK_SECONDS ?= 600
SOAK_CLIENTS ?= 64

.PHONY: all setup serve check test test-release test-asan fuzz fuzz-smoke soak bench clean

all: setup

setup:
	@WARDEN_JOBS=$(JOBS) scripts/setup

serve: setup
	@exec build/app/warden serve $(ARGS)

# The edit-test loop: unit tests, the source gates and the scripted-upstream suites on the Release
# build; sets up only what they need (no llama-server build, no model download).
check:
	@WARDEN_JOBS=$(JOBS) scripts/test check

# The whole suite twice: the Release build, then an ASan+UBSan build of the same code; prints the
# wall time of each phase and the 15 slowest tests at its end (scripts/test).
test:
	@WARDEN_JOBS=$(JOBS) scripts/test all

test-release:
	@WARDEN_JOBS=$(JOBS) scripts/test release

test-asan:
	@WARDEN_JOBS=$(JOBS) scripts/test asan

# The libFuzzer harnesses of fuzz/ (clang, build-fuzz), FUZZ_SECONDS each; per harness: executions,
# exec/s, seconds, crashes; a crash stops with the reproducer's path (scripts/fuzz, docs/testing.md).
fuzz:
	@scripts/setup packages
	@WARDEN_JOBS=$(JOBS) FUZZ_RUNS=$(FUZZ_RUNS) scripts/fuzz run $(FUZZ_SECONDS)

# Every harness 5 s on its committed seeds, in the clang fuzz build. (`make test` runs a cheaper
# smoke in its own builds: ctest's fuzz/<name> entries, fuzz/smoke_main.cpp.)
fuzz-smoke:
	@scripts/setup packages
	@WARDEN_JOBS=$(JOBS) scripts/fuzz smoke

# The soak under chaos (bench/soak.py; not part of `make test`): SOAK_CLIENTS clients for
# SOAK_SECONDS against the scripted upstream, which is killed every 45 s; then RSS, fds, live
# work and the audit log against the baseline. Exit 1 when a check fails.
soak:
	@scripts/setup packages pydeps warden
	@$(WARDEN_HOME)/venv/bin/python bench/soak.py --warden build/app/warden --seconds $(SOAK_SECONDS) \
	  --clients $(SOAK_CLIENTS)

# The benchmarks (bench/, docs/testing.md): against llama-server, parked approvals, the sandbox, the
# Anthropic surface, large bodies, the request checks, stored responses, then the gateway against a fast scripted
# upstream and LiteLLM's proxy (its venv: scripts/setup benchdeps), with the regression guard.
bench: setup
	@$(WARDEN_HOME)/venv/bin/python bench/run_bench.py --warden build/app/warden
	@$(WARDEN_HOME)/venv/bin/python bench/approval_bench.py --warden build/app/warden --streams 10000
	@$(WARDEN_HOME)/venv/bin/python bench/anthropic_bench.py --warden build/app/warden
	@$(WARDEN_HOME)/venv/bin/python bench/parse_bench.py --warden build/app/warden
	@$(WARDEN_HOME)/venv/bin/python bench/stored_response_bench.py --warden build/app/warden
	@build/bench/sandbox_bench 40
	@build/bench/request_guard_bench 2000
	@build/bench/kb_search_bench 10000 100000
	@scripts/setup benchdeps || echo "make bench: no LiteLLM venv (see above); the gateway bench runs without its peer"
	@$(WARDEN_HOME)/venv/bin/python bench/gateway_bench.py --warden build/app/warden --upstream build/bench/fast_upstream

clean:
	rm -rf build build-asan build-fuzz
