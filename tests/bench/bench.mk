# tests/bench/bench.mk: `make bench` and `make bench-small`, included by the
# Makefile. Builds inquest with -O2 in its own build dir, generates a
# deterministic bundle once (cached in BENCH_DIR, keyed by scale, seed and a
# hash of the generator) and runs tests/bench/run_bench.py on it.

BENCH_SCALE       ?= 480
BENCH_SMALL_SCALE ?= 20
BENCH_SEED        ?= 1
BENCH_DIR         ?= bench-out
BENCH_O           ?= build-bench
BENCH_OPT         ?= -O2
BENCH_GEN         := fixtures/gen/make_bundle.py
BENCH_GEN_HASH     = $(shell sha256sum $(BENCH_GEN) | cut -c1-12)
BENCH_KEY          = s$(BENCH_SCALE)-seed$(BENCH_SEED)-$(BENCH_GEN_HASH)
BENCH_BUNDLE       = $(BENCH_DIR)/bundle-$(BENCH_KEY).tar.gz
BENCH_TRUTH        = $(BENCH_DIR)/truth-$(BENCH_KEY).json

.PHONY: bench bench-small bench-build bench-bundle bench-memory bench-deps

# BENCH_RUNS=N repeats each measurement; BENCH_STRICT=1 fails on a missed
# target (ratio, RSS) as well as on dropped lines.
# lnav (and GoAccess, the access-log yardstick) are installed when missing,
# as the build's own packages are: the ratio is the bench's point.
bench-deps: deps
	$(call install_missing,lnav goaccess)

bench: bench-deps bench-build bench-bundle
	python3 tests/bench/run_bench.py --inquest $(BENCH_O)/inquest \
	  --bundle $(BENCH_BUNDLE) --truth $(BENCH_TRUTH) --work $(BENCH_DIR)/run-$(BENCH_KEY)

bench-small:
	@$(MAKE) --no-print-directory bench BENCH_SCALE=$(BENCH_SMALL_SCALE)

# Bounded memory: the peak RSS of analyze on ~100 MB (scale 48) and ~2 GB
# (scale 960) bundles, which must be within 10% of each other.
BENCH_MEM_SMALL = $(BENCH_DIR)/bundle-s48-seed$(BENCH_SEED)-$(BENCH_GEN_HASH).tar.gz
BENCH_MEM_LARGE = $(BENCH_DIR)/bundle-s960-seed$(BENCH_SEED)-$(BENCH_GEN_HASH).tar.gz
bench-memory: bench-build $(BENCH_MEM_SMALL) $(BENCH_MEM_LARGE)
	BENCH_DIR=$(BENCH_DIR) python3 tests/bench/memory.py $(BENCH_O)/inquest $(BENCH_MEM_SMALL) $(BENCH_MEM_LARGE)

# A build dir built with other flags is rebuilt from scratch, so the bench
# never measures a -O0 or sanitizer object by accident.
bench-build:
	@if [ "$$(cat $(BENCH_O)/.bench-opt 2>/dev/null)" != "$(BENCH_OPT)" ]; then \
	  rm -rf $(BENCH_O); mkdir -p $(BENCH_O); echo "$(BENCH_OPT)" > $(BENCH_O)/.bench-opt; fi
	@$(MAKE) --no-print-directory O=$(BENCH_O) OPT="$(BENCH_OPT)" all

bench-bundle: $(BENCH_BUNDLE) $(BENCH_TRUTH)

# The stem is s<scale>-seed<seed>-<hash>. The generator names the archive
# in truth.json after its basename, so it
# writes under the final name in a scratch dir and both files move into place
# together only when it succeeds.
$(BENCH_DIR)/bundle-%.tar.gz $(BENCH_DIR)/truth-%.json:
	@mkdir -p $(BENCH_DIR)
	rm -rf $(BENCH_DIR)/.gen-$*
	mkdir -p $(BENCH_DIR)/.gen-$*
	python3 $(BENCH_GEN) --out $(BENCH_DIR)/.gen-$*/bundle-$*.tar.gz \
	  --truth $(BENCH_DIR)/.gen-$*/truth.json \
	  --seed $(patsubst seed%,%,$(word 2,$(subst -, ,$*))) \
	  --scale $(patsubst s%,%,$(word 1,$(subst -, ,$*)))
	mv $(BENCH_DIR)/.gen-$*/truth.json $(BENCH_DIR)/truth-$*.json
	mv $(BENCH_DIR)/.gen-$*/bundle-$*.tar.gz $(BENCH_DIR)/bundle-$*.tar.gz
	rm -rf $(BENCH_DIR)/.gen-$*
