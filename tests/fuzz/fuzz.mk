# tests/fuzz/fuzz.mk: libFuzzer targets and corpus replay, included by the
# Makefile. One target per format in analyzer/parse/formats.def (all built
# from fuzz_format.c), plus sniffing, time parsing, rule packs and the
# bundle walker.
#
#   make fuzz            build every target, run each FUZZ_SECONDS on its
#                        corpus; crashes land in tests/fuzz/crashes/<target>/
#   make fuzz-replay     replay tests/fuzz/corpus/ and tests/fuzz/crashes/
#                        under ASan+UBSan without libFuzzer (for make check)
#   make fuzz-merge      add the new-coverage inputs of the scratch corpora
#                        to the committed ones (review their size!)
#   make fuzz-clean
#
# A longer session, one target at a time with a log row per target (seconds,
# executions, cov, ft, crashes): sh tests/fuzz/campaign.sh TARGET:SECONDS...
#
# FUZZ_TARGETS=fuzz_cri picks targets; FUZZ_FLAGS adds libFuzzer options.

FUZZ_SECONDS ?= 60
FUZZ_O       ?= build-fuzz
FUZZ_RO      ?= build-fuzz-replay
FUZZ_CC      ?= clang
FUZZ_FLAGS   ?=
# What fuzz-replay runs: the corpus, and the crash inputs (which must pass
# once their bugs are fixed).
FUZZ_REPLAY_SETS ?= corpus crashes

FUZZ_DIR     := tests/fuzz
# docker_json from IQ_FORMAT(docker_json): the binary is fuzz_docker_json,
# the format name docker-json.
FUZZ_SYMS    := $(shell sed -n 's/^IQ_FORMAT(\([A-Za-z0-9_]*\)).*/\1/p' analyzer/parse/formats.def)
FUZZ_FORMAT_TARGETS := $(addprefix fuzz_,$(FUZZ_SYMS))
FUZZ_OTHER_TARGETS  := fuzz_sniff fuzz_time fuzz_rules fuzz_bundle
FUZZ_TARGETS ?= $(FUZZ_FORMAT_TARGETS) $(FUZZ_OTHER_TARGETS)
# JSON formats without a dictionary of their own get the JSON keys one
FUZZ_JSON_TARGETS := fuzz_traefik_json fuzz_gcp_lb_json fuzz_journald_json fuzz_prometheus_json \
                     fuzz_k8s_pods fuzz_k8s_manifest

FUZZ_CFLAGS  := -g -O1 -fno-omit-frame-pointer -std=c11 -D_POSIX_C_SOURCE=200809L \
                $(WARN) -MMD -MP
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all
# abort() (a broken FUZZ_CHECK) is reported like any sanitizer error
FUZZ_ENV     := ASAN_OPTIONS=handle_abort=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1

# $(call fuzz_build_rules,DIR,COMPILE SANITIZERS,LINK SANITIZERS,EXTRA LINK OBJS):
# the library (same sources as the main build, and the embedded schema and
# rule packs generated as the main Makefile does) and every target, in DIR.
define fuzz_build_rules
$(1)_LIBOBJS := $(patsubst %.c,$(1)/%.o,$(SRCS)) $(1)/gen/schema_sql.o $(1)/gen/rules_builtin.o \
                $(1)/gen/build_info.o

$(1)/analyzer/%.o: analyzer/%.c
	@mkdir -p $$(dir $$@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(2) $$(PKG_CFLAGS) -c -o $$@ $$<
$(1)/gen/schema_sql.c: $(SCHEMA) schema/indexes.sql tests/tools/embed.sh
	@mkdir -p $$(dir $$@)
	{ sh tests/tools/embed.sh iq_schema_sql $(SCHEMA); \
	  sh tests/tools/embed.sh iq_index_sql schema/indexes.sql; } > $$@
$(1)/gen/build_info.c:
	@mkdir -p $$(dir $$@)
	printf 'const char iq_build_commit[] = "%s";\n' 'fuzz' > $$@
$(1)/gen/rules_builtin.c: $(PACKS) tests/tools/embed_rules.sh
	@mkdir -p $$(dir $$@)
	sh tests/tools/embed_rules.sh $(PACKS) > $$@
$(1)/gen/%.o: $(1)/gen/%.c
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(2) -c -o $$@ $$<
# the format targets: fuzz_format.c once per format
# (static pattern rules: a generic one would also "remake" the .d files)
$(patsubst %,$(1)/t/fmt_%.o,$(FUZZ_SYMS)): $(1)/t/fmt_%.o: $(FUZZ_DIR)/fuzz_format.c
	@mkdir -p $$(dir $$@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(2) $$(PKG_CFLAGS) '-DIQ_FUZZ_FORMAT="$$(subst _,-,$$*)"' -c -o $$@ $$<
$(patsubst %,$(1)/t/%.o,$(FUZZ_OTHER_TARGETS) replay): $(1)/t/%.o: $(FUZZ_DIR)/%.c
	@mkdir -p $$(dir $$@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(2) $$(PKG_CFLAGS) -c -o $$@ $$<
$(addprefix $(1)/,$(FUZZ_FORMAT_TARGETS)): $(1)/fuzz_%: $(1)/t/fmt_%.o $(4) $$($(1)_LIBOBJS)
	$(FUZZ_CC) $(3) -o $$@ $$^ $$(LDLIBS)
$(addprefix $(1)/,$(FUZZ_OTHER_TARGETS)): $(1)/fuzz_%: $(1)/t/fuzz_%.o $(4) $$($(1)_LIBOBJS)
	$(FUZZ_CC) $(3) -o $$@ $$^ $$(LDLIBS)

-include $$(wildcard $(1)/analyzer/*/*.d $(1)/gen/*.d $(1)/t/*.d)
endef

$(eval $(call fuzz_build_rules,$(FUZZ_O),$(FUZZ_SAN) -fsanitize=fuzzer-no-link,$(FUZZ_SAN) -fsanitize=fuzzer,))
$(eval $(call fuzz_build_rules,$(FUZZ_RO),$(FUZZ_SAN),$(FUZZ_SAN),$(FUZZ_RO)/t/replay.o))

.PHONY: fuzz fuzz-build fuzz-replay fuzz-replay-build fuzz-merge fuzz-clean

fuzz-build: $(addprefix $(FUZZ_O)/,$(FUZZ_TARGETS))
fuzz-replay-build: $(addprefix $(FUZZ_RO)/,$(FUZZ_TARGETS))

# The seeds of a target's scratch corpus ($(FUZZ_O)/corpus/<target>/), next
# to the committed one: the fixtures of a format; every fixture behind a
# path line for sniffing; the shipped packs for rules. Only minimized,
# interesting inputs go into tests/fuzz/corpus/ (make fuzz-merge).
fuzz_seed = \
	scratch=$(FUZZ_O)/corpus/$(1); mkdir -p $$scratch $(FUZZ_DIR)/crashes/$(1); \
	case $(1) in \
	fuzz_sniff) for f in fixtures/lines/*/*.log; do \
	    [ -f "$$f" ] || continue; \
	    { echo "nodes/n1/var/log/pods/ns_pod_uid/c/0.log"; cat "$$f"; } \
	      > $$scratch/seed-$$(echo "$$f" | tr / _); done ;; \
	fuzz_rules) for f in $(PACKS); do cp "$$f" $$scratch/seed-$$(basename "$$f"); done ;; \
	fuzz_time|fuzz_bundle) ;; \
	*) fmt=$$(echo $(1) | sed 's/^fuzz_//; s/_/-/g'); \
	   for f in fixtures/lines/$$fmt/*.log; do \
	     [ -f "$$f" ] && cp "$$f" $$scratch/seed-$$(basename "$$f"); done ;; \
	esac

# Runs every target in turn; one that crashes does not stop the others, but
# fails the run. libFuzzer writes the crashing input into crashes/<target>/.
fuzz: fuzz-build
	@status=0; for t in $(FUZZ_TARGETS); do \
	  $(call fuzz_seed,$$t); \
	  echo "== $$t ($(FUZZ_SECONDS)s)"; \
	  dict=; [ -f $(FUZZ_DIR)/dict/$$t.dict ] && dict=-dict=$(FUZZ_DIR)/dict/$$t.dict; \
	  case " $(FUZZ_JSON_TARGETS) " in *" $$t "*) [ -n "$$dict" ] || dict=-dict=$(FUZZ_DIR)/dict/json.dict ;; esac; \
	  kept=; [ -d $(FUZZ_DIR)/corpus/$$t ] && kept=$(FUZZ_DIR)/corpus/$$t; \
	  $(FUZZ_ENV) $(FUZZ_O)/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
	    -rss_limit_mb=2048 -print_final_stats=1 $$dict \
	    -artifact_prefix=$(FUZZ_DIR)/crashes/$$t/ $(FUZZ_FLAGS) \
	    $(FUZZ_O)/corpus/$$t $$kept \
	    > $(FUZZ_O)/$$t.log 2>&1 || { status=1; echo "$$t: FAILED, see $(FUZZ_O)/$$t.log"; }; \
	  grep -E '^#[0-9]+[[:space:]].*cov:' $(FUZZ_O)/$$t.log | tail -1; \
	  grep -E '^(stat::number_of_executed_units|SUMMARY)' $(FUZZ_O)/$$t.log; \
	done; exit $$status

# Replays the committed inputs with plain clang builds (no libFuzzer
# runtime); quick, and any sanitizer report or broken check fails it.
fuzz-replay: fuzz-replay-build
	@status=0; for t in $(FUZZ_TARGETS); do \
	  files=$$(for s in $(FUZZ_REPLAY_SETS); do \
	    [ -d $(FUZZ_DIR)/$$s/$$t ] && find $(FUZZ_DIR)/$$s/$$t -type f ! -name '.*'; done | sort); \
	  [ -n "$$files" ] || continue; \
	  printf '== %s: ' $$t; \
	  $(FUZZ_ENV) $(FUZZ_RO)/$$t $$files || { status=1; echo "$$t: FAILED"; }; \
	done; exit $$status

# Adds the inputs of the scratch corpora that bring new coverage to the
# committed corpora, at most 4 KB each.
fuzz-merge: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_DIR)/corpus/$$t $(FUZZ_O)/corpus/$$t; \
	  $(FUZZ_ENV) $(FUZZ_O)/$$t -merge=1 -max_len=4096 \
	    $(FUZZ_DIR)/corpus/$$t $(FUZZ_O)/corpus/$$t 2>&1 | grep -E '^MERGE-OUTER: [0-9]+ new files'; \
	done

fuzz-clean:
	rm -rf $(FUZZ_O) $(FUZZ_RO)
