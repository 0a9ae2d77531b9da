#!/usr/bin/env python3
"""perf_stages.py - splits a `perf record -g` profile of `inquest analyze`
into pipeline stages.

    perf record -e cpu-clock -F 1999 --call-graph dwarf,32768 -o perf.data \
        build-bench-prof/inquest analyze BUNDLE -o OUT --quiet
    perf script -i perf.data -F comm,tid,ip,sym,dso,srcline > script.txt
    python3 tests/bench/perf_stages.py script.txt

Each sample's stack is read from the leaf outwards and given to the first
stage that claims one of its frames (source files come from srcline, so the
build needs -g).  Standard library only.
"""

import collections
import re
import sys

FORMAT_FILES = re.compile(r"^(?!driver|util|registry|sniff|logpath)([a-z0-9_]+)\.c$")


def samples(path):
    frames = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            if not raw.strip():
                if frames:
                    yield frames
                frames = []
                continue
            if not raw.startswith((" ", "\t")):          # "comm tid" header
                if frames:
                    yield frames
                frames = []
                continue
            s = raw.strip()
            m = re.match(r"^[0-9a-f]+ (.*) \((.*)\)$", s)
            if m:
                sym, dso = m.group(1), m.group(2)
                frames.append([sym, dso.rsplit("/", 1)[-1], ""])
            elif frames and not frames[-1][2]:
                frames[-1][2] = s                        # srcline "file.c:NN"
    if frames:
        yield frames


def sqlite_sub(syms):
    if any(s.startswith("sqlite3WalCheckpoint") or s == "sqlite3Checkpoint" for s in syms):
        return "WAL checkpoint (db file writes)"
    if any("pwrite" in s or s.startswith("sqlite3WalFrames") or s.startswith("sqlite3PagerCommitPhaseOne")
           for s in syms):
        return "WAL page writes"
    return "VDBE/B-tree/bind (CPU)"


def _store_site(frames):
    """The outermost store.c source line of a stack: which statement."""
    site = ""
    for sym, dso, src in frames:
        if dso == "inquest" and src.startswith("store.c:"):
            site = "%s %s" % (sym.replace(" (inlined)", ""), src)
    return site


def classify(frames):
    syms = [f[0].replace(" (inlined)", "") for f in frames]
    # source files only for inquest's own frames (libc's malloc.c is no format)
    files = [f[2].split(":")[0] if f[1] == "inquest" else "" for f in frames]
    have = set(syms)
    # Phases after the load, outermost first.
    if "iq_store_finish" in have:
        if "commit_tx" in have:
            return "sqlite: final COMMIT (ingest)"
        return "index build (CREATE INDEX after load)"
    if "iq_store_close" in have:
        return "store close (WAL -> DELETE journal, checkpoint)"
    if "iq_detect" in have:
        return "detect"
    if any(s.startswith(("iq_report_build", "iq_render", "iq_write_atomic")) for s in have):
        return "report (findings.json, postmortem.md)"
    if "iq_store_open" in have:
        return "store open (schema)"
    if "iq_load_rules" in have or any(s.startswith("iq_rules_load") for s in have):
        return "rules load (PCRE2 compile)"
    if "iq_ingest_run" not in have and "iq_bundle_walk" not in have and "iq_parse_run" not in have:
        if any(f[1] == "inquest" for f in frames):
            return "other (startup/exit)"
        leaf = frames[0][1] if frames else "?"
        if leaf.startswith("perf-") and leaf.endswith(".map"):
            return "PCRE2 matching (JIT code; stack not unwound)"
        return "unattributed (stack not unwound; leaf in %s)" % leaf
    # Ingest: the innermost frame that names a stage wins.
    for i, (sym, fl) in enumerate(zip(syms, files)):
        if sym == "iq_rules_match" or fl == "rules.c":
            return "PCRE2 matching (iq_rules_match)"
        if sym.startswith("iq_store_") or fl == "store.c":
            return "sqlite inserts: " + sqlite_sub(syms[:i]), _store_site(frames)
        if sym in ("archive_read_data", "member_read", "source_read", "stream_read",
                   "archive_read_next_header", "archive_read_open1") or fl == "walk.c":
            return "decompress + archive walk (libarchive, zlib, read)"
        m = FORMAT_FILES.match(fl)
        if m and fl not in ("pipeline.c", "lines.c", "buf.c", "diag.c", "iqtime.c"):
            return "parse: " + m.group(1)
        if fl == "iqtime.c":
            # time parsing is a parser's work: charge it to the calling format
            for fl2 in files[i + 1:]:
                m2 = FORMAT_FILES.match(fl2)
                if m2 and fl2 not in ("pipeline.c", "lines.c", "buf.c", "diag.c", "iqtime.c"):
                    return "parse: " + m2.group(1)
            return "parse: time parsing"
        if sym == "iq_lines_feed" or fl == "lines.c":
            return "line splitting (iq_lines_feed)"
        if fl in ("pipeline.c", "driver.c"):
            return "pipeline glue (on_record, sinks, sniff)"
    return "ingest: other"


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: perf_stages.py PERF-SCRIPT-OUTPUT\n")
        return 2
    stages = collections.Counter()
    leaves = collections.defaultdict(collections.Counter)
    sites = collections.Counter()
    n = 0
    for fr in samples(argv[1]):
        n += 1
        st = classify(fr)
        if isinstance(st, tuple):
            st, site = st
            sites[site] += 1
        stages[st] += 1
        leaves[st][fr[0][1]] += 1
    if not n:
        sys.stderr.write("perf_stages: no samples\n")
        return 1
    print("%6s %7s  %s" % ("samples", "share", "stage   [where the time is spent: dso share]"))
    for st, c in stages.most_common():
        dsos = ", ".join("%s %.0f%%" % (d.replace(".so", "").split(".")[0], 100.0 * k / c)
                         for d, k in leaves[st].most_common(3))
        print("%6d %6.1f%%  %s   [%s]" % (c, 100.0 * c / n, st, dsos))
    print("%6d 100.0%%  total" % n)
    print("\nsqlite insert samples by call site in store.c (outermost frame):")
    for site, c in sites.most_common(12):
        print("%6d %6.1f%%  %s" % (c, 100.0 * c / n, site))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
