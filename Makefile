# inquest: build, set-up, tests. `make demo` and `make test` work as the
# first command on a fresh Debian 12 machine: both install what is missing.

PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= cc
O       ?= build

DEB_PKGS := libpcre2-dev libsqlite3-dev libarchive-dev libjansson-dev \
            libcmocka-dev libyaml-dev libisal-dev pkg-config python3 groff-base tzdata cmark-gfm
PKGS     := libpcre2-8 sqlite3 libarchive jansson yaml-0.1 libisal

WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wformat=2 -Wvla -Wno-format-nonliteral
ifneq ($(CI),)
WERROR  ?= -Werror
endif
OPT     ?= -O2 -g
CFLAGS  ?= $(OPT)
CFLAGS  += -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) $(WERROR) -MMD -MP
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
LDLIBS  += $(PKG_LIBS) -lm -lpthread

SRCS    := $(sort $(wildcard analyzer/*/*.c))
LIBOBJS := $(patsubst %.c,$(O)/%.o,$(SRCS)) $(O)/schema_sql.o $(O)/rules_builtin.o $(O)/build_info.o
PACKS   := $(sort $(wildcard rules/*.json))
MAINOBJ := $(O)/analyzer/main.o
BIN     := $(O)/inquest

UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(patsubst tests/unit/%.c,$(O)/tests/%,$(UNIT_SRCS))

SCHEMA  := $(sort $(wildcard schema/0*.sql))

.PHONY: all deps check-deps demo test unit e2e rules-test check tsan clean install golden docs FORCE test-browser
all: $(BIN)

$(BIN): $(MAINOBJ) $(LIBOBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -c -o $@ $<

# The schema is compiled into the binary as one string, in file order.
$(O)/schema_sql.c: $(SCHEMA) schema/indexes.sql tests/tools/embed.sh
	@mkdir -p $(O)
	{ sh tests/tools/embed.sh iq_schema_sql $(SCHEMA); \
	  sh tests/tools/embed.sh iq_index_sql schema/indexes.sql; } > $@
$(O)/schema_sql.o: $(O)/schema_sql.c
	$(CC) $(CFLAGS) -c -o $@ $<
# The shipped rule packs travel inside the binary too.
$(O)/rules_builtin.c: $(PACKS) tests/tools/embed_rules.sh
	@mkdir -p $(O)
	sh tests/tools/embed_rules.sh $(PACKS) > $@
$(O)/rules_builtin.o: $(O)/rules_builtin.c
	$(CC) $(CFLAGS) -c -o $@ $<

# The commit the binary is built from, for --version: git describe when the
# tree is a git checkout (COMMIT= overrides it, for a package built from a
# tarball). The file is rewritten only when the commit changes, so that a
# build does not relink for nothing.
COMMIT ?= $(shell git describe --always --dirty 2>/dev/null)
$(O)/build_info.c: FORCE
	@mkdir -p $(O)
	@printf 'const char iq_build_commit[] = "%s";\n' '$(subst ','',$(subst ",,$(COMMIT)))' > $@.new
	@if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi
$(O)/build_info.o: $(O)/build_info.c
	$(CC) $(CFLAGS) -c -o $@ $<
FORCE:

$(O)/tests/%: tests/unit/%.c $(LIBOBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

# Installs the Debian packages the build and tests need when one is missing:
# with apt-get as root, otherwise prints the command to run.
# `make check` and `make fuzz` also need clang and its sanitizer runtimes.
CHECK_PKGS := clang libclang-rt-14-dev
define install_missing
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	  else \
	    echo "missing packages; run: sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi
endef

deps:
	$(call install_missing,$(DEB_PKGS))

check-deps: deps
	$(call install_missing,$(CHECK_PKGS))

demo: deps
	@$(MAKE) --no-print-directory all
	@rm -rf demo-out
	./$(BIN) analyze fixtures/sample/sample-bundle.tar.gz -o demo-out
	@echo "postmortem written to: $(CURDIR)/demo-out/postmortem.md"

# Every test, one line a suite and last their sum: "N passed, N failed".
test: deps
	@$(MAKE) --no-print-directory -s all $(UNIT_BINS) $(O)/tests/collect
	@COLLECT=$(O)/tests/collect sh tests/run.sh $(BIN) $(UNIT_BINS)

unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; ./$$t; done

rules-test: $(BIN)
	./$(BIN) rules test

# postmortem.html in a real browser: installs Debian's chromium when it is
# missing, then runs the browser suite (make test runs it too when chromium
# is there, and says it skipped otherwise).
test-browser: deps
	$(call install_missing,chromium)
	@$(MAKE) --no-print-directory all
	TZ=UTC LC_ALL=C python3 tests/e2e/browser.py $(BIN)

# The suites run the binary through $(O)/tests/collect, which keeps a copy
# of every findings.json they make for the schema check at the end.
$(O)/tests/collect: tests/tools/collect.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<

e2e: $(BIN) $(O)/tests/collect
	TZ=UTC LC_ALL=C sh tests/e2e/run.sh $(BIN) $(O)/tests/collect

# The suite under AddressSanitizer and UndefinedBehaviorSanitizer, then the
# fuzz corpus and the crash inputs replayed (tests/fuzz/).
check: check-deps
	$(MAKE) --no-print-directory O=build-asan CC=clang \
	  OPT="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	  LDFLAGS="-fsanitize=address,undefined" unit rules-test e2e
	$(MAKE) --no-print-directory tsan
	$(MAKE) --no-print-directory fuzz-replay

# The threaded ingest under ThreadSanitizer: the --jobs comparison suite.
tsan: check-deps
	$(MAKE) --no-print-directory O=build-tsan CC=clang OPT="-O1 -g -fsanitize=thread" \
	  LDFLAGS="-fsanitize=thread" all
	TZ=UTC LC_ALL=C TSAN_OPTIONS="halt_on_error=1 exitcode=66" sh tests/e2e/jobs.sh build-tsan/inquest

# The command reference of docs/inquest.1 and README.md, made again from the
# command table (analyzer/cli/commands.c); make test checks it is current.
docs: $(BIN)
	sh tests/tools/docs.sh $(BIN)

golden: $(BIN)
	TZ=UTC LC_ALL=C GOLDEN=1 sh tests/e2e/run.sh $(BIN)

install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/inquest
	install -m 644 docs/inquest.1 $(DESTDIR)$(PREFIX)/share/man/man1/inquest.1

clean:
	rm -rf $(O) build-asan build-tsan demo-out

# libFuzzer targets and corpus replay (tests/fuzz/), and the benchmark.
ifneq ($(filter fuzz% check,$(MAKECMDGOALS)),)
-include tests/fuzz/fuzz.mk
endif
-include tests/bench/bench.mk

-include $(LIBOBJS:.o=.d) $(MAINOBJ:.o=.d)
