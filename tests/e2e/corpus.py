#!/usr/bin/env python3
"""corpus.py BIN [CORPUS]: the shipped rule packs over the shared corpus of
real log lines (../shared/corpus, or $IQ_CORPUS; see its README): recall per
class and false positives, each row of a .tsv matched as one plain line with
`inquest rules match`, each snippet as one file. Skips with a message when the
corpus is absent: the project's own tests never need it. Exits 1 when a
labelled row is not recognised or a row or snippet line is tagged with a
signal it must not carry, naming the row and its source.

Which signals recognise a class is the packs' own split: host_oom rows are
the host-memory boundary, recognised by the kill (host-oom), by the other
lines of the kernel's report of one (oom-killer-report: the OOM path in its
stack) or by the pressure that precedes one (memory-pressure, e.g. kubelet
evictions); xid rows by an Xid record (gpu-xid) or another driver fault line
(gpu-driver-fault)."""
import os
import subprocess
import sys
import tempfile

# class -> signals that recognise it
WANT = {
    "cuda_oom": {"cuda-oom"},
    "host_oom": {"host-oom", "memory-pressure", "oom-killer-report"},
    "xid": {"gpu-xid", "gpu-driver-fault"},
    "crashloop": {"crashloop"},
}
# signals that are a false positive on a row of a class (a near miss is a
# negative for every OOM and GPU-fault signal; a host OOM must never read as
# the GPU pattern; serving, LB and metric lines carry none of them)
FAULTS = {"cuda-oom", "host-oom", "gpu-xid", "gpu-driver-fault"}
NOT = {
    "cuda_oom": {"host-oom", "gpu-xid", "gpu-driver-fault"},
    "host_oom": {"cuda-oom", "gpu-xid", "gpu-driver-fault"},
    "xid": {"cuda-oom", "host-oom"},
    "crashloop": {"cuda-oom", "gpu-xid", "gpu-driver-fault"},
    "near_miss": FAULTS,
    "serving_logs": FAULTS | {"crashloop"},
    "lb_access": FAULTS | {"crashloop"},
    "gpu_metrics": FAULTS | {"crashloop"},
}


def match(binary, lines):
    """{line number (1-based): set of signal ids} for the lines as one file."""
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False, encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
        path = f.name
    try:
        out = subprocess.run([binary, "rules", "match", path], capture_output=True,
                             text=True, encoding="utf-8", errors="replace", check=False)
    finally:
        os.unlink(path)
    # grep's exit status: 0 some line matched, 1 none did
    if out.returncode not in (0, 1):
        sys.exit("corpus: inquest rules match exited %d: %s" % (out.returncode, out.stderr))
    hits = {}
    for row in out.stdout.splitlines():
        where, sigs = row.split("\t")[:2]
        hits[int(where.rsplit(":", 1)[1])] = set(sigs.split(","))
    return hits


def rows(path):
    """(label, source, line) of a .tsv; a literal tab is written as \\t."""
    with open(path, encoding="utf-8") as f:
        for raw in f:
            raw = raw.rstrip("\n")
            if raw.strip():
                label, source, line = raw.split("\t", 2)
                yield label, source, line.replace("\\t", "\t")


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: corpus.py BIN [CORPUS]")
    binary = os.path.abspath(sys.argv[1])
    corpus = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("IQ_CORPUS", "../shared/corpus")
    if not os.path.isdir(corpus):
        print("corpus: %s is absent, skipped (the shared corpus of real lines is not part of "
              "the project)" % corpus)
        print("corpus: 0 passed, 0 failed")
        return 0
    bad = []
    table = []
    for name in sorted(os.listdir(corpus)):
        if not name.endswith(".tsv"):
            continue
        cls = name[:-4]
        items = list(rows(os.path.join(corpus, name)))
        hits = match(binary, [line for _, _, line in items])
        want, wrong = WANT.get(cls), NOT.get(cls, set())
        found = fps = 0
        for i, (_, source, line) in enumerate(items, 1):
            got = hits.get(i, set())
            if want is not None:
                if got & want:
                    found += 1
                else:
                    bad.append((cls, "%s: not recognised (%s): %s  [%s]"
                                % (cls, "/".join(sorted(want)), line[:160], source)))
            if got & wrong:
                fps += 1
                bad.append((cls, "%s: false positive %s: %s  [%s]"
                            % (cls, ",".join(sorted(got & wrong)), line[:160], source)))
        table.append((cls, len(items), found if want is not None else None, fps))
    # snippets: one file each, cut out of longer reports (some stop before
    # the line their class is named after): no line may carry a signal its
    # class must not; how many have a recognised line is shown, not required
    sdir = os.path.join(corpus, "snippets")
    for cls in sorted(os.listdir(sdir)) if os.path.isdir(sdir) else []:
        files = sorted(os.listdir(os.path.join(sdir, cls)))
        found = fps = 0
        for fn in files:
            with open(os.path.join(sdir, cls, fn), encoding="utf-8") as f:
                text = f.read().splitlines()
            source = text[0][len("# source: "):] if text and text[0].startswith("# source:") else fn
            hits = match(binary, text[1:])
            got = set().union(*hits.values()) if hits else set()
            want, wrong = WANT.get(cls), NOT.get(cls, set())
            if want is not None and got & want:
                found += 1
            if got & wrong:
                fps += 1
                bad.append(("snippets/" + cls, "snippets/%s/%s: false positive %s  [%s]"
                            % (cls, fn, ",".join(sorted(got & wrong)), source)))
        table.append(("snippets/" + cls, len(files), found if want is not None else None, fps))
    print("  corpus (%s):" % corpus)
    print("  %-24s %6s %6s %7s %6s" % ("class", "rows", "found", "recall", "FP"))
    for cls, n, found, fps in table:
        recall = "%.2f" % (found / n) if found is not None and n else "-"
        print("  %-24s %6d %6s %7s %6d" % (cls, n, "-" if found is None else found, recall, fps))
    for _, msg in bad:
        print("FAIL: " + msg)
    checks = len(table)
    failed = len({cls for cls, _ in bad})
    print("corpus: %d passed, %d failed" % (checks - failed, failed))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
