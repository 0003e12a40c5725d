# planner: build, test, install.  `make help` lists the targets.
#
# Every .c file of the library layers (src/<layer>/, all but src/tool/) goes
# into libplanner.a, src/tool/ into libtool.a; the planner binary and every
# test link against them, so adding a module needs no edit here.

PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
MANDIR    ?= $(PREFIX)/share/man/man1
# configs/ and clusters/, found by name: --model gpt3-175b --cluster h100x512
SHAREDIR  ?= $(PREFIX)/share/planner
CC        ?= cc
VERSION   := 0.1.0

# The project's required flags: user CFLAGS / CPPFLAGS add to them (make
# CFLAGS=-O0 keeps -std=c11 and every warning).
WARN      := -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wformat=2 \
             -Wstrict-prototypes -Wmissing-prototypes -Wvla -Werror
PL_CPPFLAGS := -Iinclude -D_POSIX_C_SOURCE=200809L -DPLANNER_VERSION='"$(VERSION)"'
CFLAGS    ?= -O2 -g
PKGS      := jansson yaml-0.1 lapacke openblas
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
# -pthread: the worker threads of base/workers.c (libc's POSIX threads)
LDLIBS    += $(PKG_LIBS) -lglpk -lm -pthread
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null)
ALL_CFLAGS = $(PL_CPPFLAGS) $(CPPFLAGS) $(PKG_CFLAGS) $(WARN) -pthread $(CFLAGS)

# The layers, bottom to top (docs/DESIGN.md): the library is every layer but
# tool/; the planner binary is tool/ on top of it.
LAYERS    := base inputs model cost schedule partition search fit out
BUILD     ?= build
LIB_SRC   := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.c))
LIB_OBJ   := $(patsubst src/%.c,$(BUILD)/%.o,$(LIB_SRC))
TOOL_SRC  := $(filter-out src/tool/main.c,$(wildcard src/tool/*.c))
TOOL_OBJ  := $(patsubst src/%.c,$(BUILD)/%.o,$(TOOL_SRC))
TEST_SRC  := $(wildcard tests/test_*.c)
TEST_BIN  := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
TEST_UTIL := tests/testutil.c
# Everything a binary links: the tool's objects (in their own archive), then
# the library, which never calls back into the tool (no link cycle: a plain
# left-to-right link resolves everything; tests/cli/layers.sh checks it).
LINK_LIBS  = $(BUILD)/libtool.a $(BUILD)/libplanner.a $(LDLIBS)

.PHONY: all deps run check test sanitize tsan fuzz bench install uninstall clean help

all: $(BUILD)/.deps-ok planner

help:
	@echo "make            build ./planner (installs missing Debian packages first)"
	@echo "make run        build and plan GPT-3 175B on 64 DGX H100 (the default example)"
	@echo "make check      build and run the test suite (fast tier)"
	@echo "make sanitize   the test suite under ASan + UBSan + LeakSanitizer"
	@echo "make tsan       build-tsan/planner under ThreadSanitizer, for -j N runs by hand"
	@echo "make fuzz       build the libFuzzer harnesses into build-fuzz/"
	@echo "make bench      search benchmarks (wall time, candidates per second)"
	@echo "make install    install planner, planner.1, configs/ and clusters/ under PREFIX ($(PREFIX))"

# Dependencies: scripts/deps.sh installs what is missing (apt-get as root,
# otherwise it prints the exact command and fails).
$(BUILD)/.deps-ok: scripts/deps.sh
	@sh scripts/deps.sh
	@mkdir -p $(BUILD) && touch $@

deps:
	@sh scripts/deps.sh

$(BUILD)/%.o: src/%.c | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libplanner.a: $(LIB_OBJ)
	rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/libtool.a: $(TOOL_OBJ)
	rm -f $@ && $(AR) rcs $@ $^

# The one link rule of the planner binary; ./planner is the default build's.
$(BUILD)/planner: $(BUILD)/tool/main.o $(BUILD)/libtool.a $(BUILD)/libplanner.a
	$(CC) $(WARN) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LINK_LIBS)

planner: $(BUILD)/planner
	cp $< $@

run: all
	./planner --model configs/gpt3-175b.json --cluster clusters/h100x512.yaml

$(BUILD)/tests/%: tests/%.c $(TEST_UTIL) tests/testutil.h $(BUILD)/libtool.a $(BUILD)/libplanner.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(TEST_UTIL) $(LINK_LIBS) $(CHECK_LIBS)

# The fast tier: every tests/test_*.c binary, then the CLI tests.
check test: all $(TEST_BIN)
	@sh tests/run_tests.sh $(BUILD) $(TEST_BIN)

# The sanitizer tier: the same tests built by clang into build-san/ with ASan +
# UBSan (LeakSanitizer comes with ASan), any report fails the run; the CLI tests
# see build-san/planner as ./planner (tests/run_sanitize.sh).  docs/testing.md.
SAN_FLAGS  := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
              -fno-sanitize-recover=all
FUZZ_FLAGS := -O1 -g -fsanitize=fuzzer-no-link,address,undefined \
              -fno-omit-frame-pointer -fno-sanitize-recover=all
FUZZ_BIN   := $(patsubst tests/fuzz/%.c,build-fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
HARNESS    := tests/fuzz/harness.c tests/fuzz/shell_words.c

sanitize:
	$(MAKE) BUILD=build-san CC=clang CFLAGS="$(SAN_FLAGS)" \
	    LDFLAGS="-fsanitize=address,undefined" build-san/planner $(TEST_BIN:$(BUILD)/%=build-san/%)
	@sh tests/run_sanitize.sh build-san $(TEST_BIN:$(BUILD)/%=build-san/%)

# ThreadSanitizer: build-tsan/planner, to run searches at -j 2 and more by
# hand (docs/testing.md); any report is a data race between the workers.
TSAN_FLAGS := -O1 -g -fsanitize=thread -fno-omit-frame-pointer

tsan:
	$(MAKE) BUILD=build-tsan CC=clang CFLAGS="$(TSAN_FLAGS)" LDFLAGS=-fsanitize=thread \
	    build-tsan/planner

# libFuzzer harnesses (tests/fuzz/fuzz_*.c) into build-fuzz/; tests/fuzz/run.sh
# runs them.
fuzz:
	$(MAKE) BUILD=build-fuzz CC=clang CFLAGS="$(FUZZ_FLAGS)" $(FUZZ_BIN)

$(BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(HARNESS) tests/fuzz/harness.h tests/fuzz/shell_words.h $(BUILD)/libtool.a $(BUILD)/libplanner.a
	$(CC) $(ALL_CFLAGS) -Itests/fuzz -fsanitize=fuzzer -o $@ $< $(HARNESS) $(LINK_LIBS)

# The replay test runs every corpus and regression input through the harness.
$(BUILD)/tests/test_replay: tests/test_replay.c $(HARNESS) tests/fuzz/harness.h tests/fuzz/shell_words.h $(TEST_UTIL) \
	    tests/testutil.h $(BUILD)/libtool.a $(BUILD)/libplanner.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests -Itests/fuzz -o $@ $< $(HARNESS) $(TEST_UTIL) $(LINK_LIBS) \
	    $(CHECK_LIBS)

bench: all
	@sh bench/run.sh

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)
	install -m 755 planner $(DESTDIR)$(BINDIR)/planner
	if [ -f planner.1 ]; then install -m 644 planner.1 $(DESTDIR)$(MANDIR)/planner.1; fi
	install -d $(DESTDIR)$(SHAREDIR)/configs $(DESTDIR)$(SHAREDIR)/clusters
	install -m 644 configs/*.json $(DESTDIR)$(SHAREDIR)/configs
	install -m 644 clusters/*.yaml $(DESTDIR)$(SHAREDIR)/clusters

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/planner $(DESTDIR)$(MANDIR)/planner.1
	rm -rf $(DESTDIR)$(SHAREDIR)

clean:
	rm -rf build build-san build-tsan build-fuzz planner

-include $(LIB_OBJ:.o=.d) $(TOOL_OBJ:.o=.d) $(BUILD)/tool/main.d
