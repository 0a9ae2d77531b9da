#!/usr/bin/env python3
"""check_sample.py BIN: end-to-end checks of `inquest` on the sample bundle
against the generator's ground truth (fixtures/sample/truth.json), which the
generator computes without inquest. Prints "sample: N passed, N failed"."""
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

BIN = os.path.abspath(sys.argv[1])
SAMPLE = "fixtures/sample/sample-bundle.tar.gz"
TRUTH = json.load(open("fixtures/sample/truth.json"))
PREFIX = os.path.basename(SAMPLE) + "!"
passed = failed = 0


def check(cond, what, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL sample: %s %s" % (what, detail))


def run(*args, ok=(0,)):
    p = subprocess.run([BIN, *args], capture_output=True, text=True)
    if p.returncode not in ok:
        print("FAIL sample: %s exited %d: %s" % (" ".join(args), p.returncode, p.stderr))
        sys.exit(1)
    return p


def query(db, sql):
    out = run("query", "--db", db, "--format", "json", sql).stdout
    return json.loads(out)


def main():
    tmp = tempfile.mkdtemp(prefix="iq-e2e-")
    try:
        # The generator is deterministic and the checked-in sample is its output.
        regen = os.path.join(tmp, os.path.basename(SAMPLE))
        subprocess.run([sys.executable, "fixtures/gen/make_bundle.py", "--out", regen,
                        "--truth", os.path.join(tmp, "truth.json")], check=True,
                       capture_output=True)
        check(open(regen, "rb").read() == open(SAMPLE, "rb").read(),
              "regenerated sample differs from fixtures/sample (run the generator and commit both)")

        out = os.path.join(tmp, "out")
        p = run("analyze", SAMPLE, "-o", out)
        check(os.path.join(out, "postmortem.md") in p.stdout, "analyze prints the postmortem path")
        f = json.load(open(os.path.join(out, "findings.json")))
        db = os.path.join(out, "inquest.db")

        check(f["tool"] == {"name": "inquest", "version": f["tool"]["version"]}, "tool")
        pats = {p["id"]: p for p in f["patterns"]}
        check("gpu-oom-cascade" in pats, "gpu-oom-cascade pattern present")
        pat = pats["gpu-oom-cascade"]
        check(pat["verdict"] == "oom_no_cascade", "verdict", pat["verdict"])

        # Every CUDA OOM line, with the right file, line and UTC time, in order.
        sig = {s["id"]: s for s in pat["signals"]}["cuda-oom"]
        want = [(o["file"], o["line"], o["time"]) for o in TRUTH["cuda_oom"]]
        got = [(e["file"], e["line"], e["time"]) for e in sig["evidence"]]
        check(sig["present"] is True, "cuda-oom present")
        check(sig["count"] == TRUTH["counts"]["cuda_oom_lines"], "cuda-oom count",
              "%d != %d" % (sig["count"], TRUTH["counts"]["cuda_oom_lines"]))
        check(got == want, "cuda-oom evidence (file, line, time)",
              "\n  got  %s\n  want %s" % (got, want))
        check(sig["first"] == want[0][2] and sig["last"] == want[-1][2], "cuda-oom first/last")
        check(all("CUDA out of memory" in e["text"] for e in sig["evidence"]), "evidence text")

        # One OOM event per death, attributed to pod and node from the log path.
        ev = [(o["pod"], o["node"], o["time"]) for o in pat["oom_events"]]
        check(ev == [(o["pod"], o["node"], o["time"]) for o in TRUTH["cuda_oom"]], "oom_events",
              str(ev))
        check(all(o["framework"] == "pytorch" and o["tried_bytes"] and o["capacity_bytes"]
                  for o in pat["oom_events"]), "oom_events numbers")
        first_pods = []
        for o in pat["oom_events"]:
            if o["pod"] not in first_pods:
                first_pods.append(o["pod"])
        check(first_pods == TRUTH["failure_order"], "pods in order of first OOM", str(first_pods))

        # Coverage: every file of the bundle, every line accounted for.
        b = f["bundle"]
        check(b["files"] == len(TRUTH["files"]), "bundle.files",
              "%d != %d" % (b["files"], len(TRUTH["files"])))
        check(b["paths"] == [SAMPLE], "bundle.paths", str(b["paths"]))
        check(b["unknown_files"] == [], "no unknown files", str(b["unknown_files"]))
        rows = query(db, "SELECT path, format, lines_read, lines_parsed, lines_skipped, status FROM files")
        files = {r["path"]: r for r in rows}
        for path, t in TRUTH["files"].items():
            r = files.get(PREFIX + path)
            check(r is not None, "file in database", path)
            if r:
                check(r["lines_read"] == t["lines"], "lines read of " + path,
                      "%s != %s" % (r["lines_read"], t["lines"]))
                check(r["lines_read"] == r["lines_parsed"] + r["lines_skipped"],
                      "read = parsed + skipped for " + path)
                check(r["status"] == "done", "status of " + path, r["status"])
        fmt_of = lambda p: ("cri" if "var/log/pods/" in p else
                            "docker-json" if p.endswith("-json.log") else
                            "k8s-events-json" if p.endswith("events.json") else
                            "ingress-nginx" if "ingress-nginx-access" in p else
                            "nvidia-smi-csv" if p.endswith("nvidia-smi.csv") else
                            "kernel" if p.endswith("kern.log") else "plain")
        for path, r in files.items():
            check(r["format"] == fmt_of(path), "format of " + path, str(r["format"]))
        unacc = query(db, "SELECT count(*) AS n FROM skips WHERE reason = 'unaccounted by the parser'")
        check(unacc[0]["n"] == 0, "no unaccounted lines")

        # Typed tables: the load balancer's requests and statuses.
        c = query(db, "SELECT count(*) AS n, sum(status = 502) AS s502, sum(status = 503) AS s503,"
                      " sum(status = 504) AS s504 FROM http_requests")[0]
        check((c["n"], c["s502"], c["s503"], c["s504"]) ==
              (TRUTH["counts"]["lb_requests"], TRUTH["counts"]["lb_502"],
               TRUTH["counts"]["lb_503"], TRUTH["counts"]["lb_504"]), "http counts", str(c))
        g = query(db, "SELECT count(DISTINCT node) AS nodes, max(mem_used_mib / mem_total_mib) AS peak"
                      " FROM gpu_samples")[0]
        check(g["nodes"] == 3 and g["peak"] >= 0.99, "gpu samples on 3 nodes reaching 99%", str(g))
        e = query(db, "SELECT count(*) AS n FROM k8s_events WHERE reason = 'BackOff'")[0]
        check(e["n"] >= 3, "BackOff events", str(e))

        # The postmortem names every OOM line as file:line.
        md = open(os.path.join(out, "postmortem.md"), encoding="utf-8").read()
        for fpath, line, _ in want:
            check("%s:%d" % (fpath, line) in md, "postmortem cites %s:%d" % (fpath, line))
        check("## Coverage" in md and "## Timeline" in md and "## Summary" in md, "postmortem sections")

        # Re-ingesting the same bundle adds no duplicates.
        db2 = os.path.join(tmp, "again.db")
        run("ingest", SAMPLE, "--db", db2, "--quiet")
        n1 = query(db2, "SELECT count(*) AS n FROM records")[0]["n"]
        p = run("ingest", SAMPLE, "--db", db2)
        n2 = query(db2, "SELECT count(*) AS n FROM records")[0]["n"]
        check(n1 == n2 and n1 > 0, "re-ingest adds no records", "%d -> %d" % (n1, n2))
        check("0 files read (%d already in the database)" % len(TRUTH["files"]) in p.stderr,
              "re-ingest reads no file", p.stderr.strip())

        # A second analyze into the same folder replaces the outputs.
        run("analyze", SAMPLE, "-o", out, "--quiet")
        n3 = query(db, "SELECT count(*) AS n FROM records")[0]["n"]
        check(n3 == n1, "second analyze replaces the database", "%d != %d" % (n3, n1))
        check(not [x for x in os.listdir(out) if x.endswith(".tmp")], "no temporary files left")

        # --fail-on: exit 1 when the verdict is reached, 0 otherwise.
        p = subprocess.run([BIN, "analyze", SAMPLE, "-o", out, "--quiet", "--fail-on",
                            "oom_no_cascade,confirmed"])
        check(p.returncode == 1, "--fail-on reached exits 1", str(p.returncode))
        p = subprocess.run([BIN, "analyze", SAMPLE, "-o", out, "--quiet", "--fail-on", "not_detected"])
        check(p.returncode == 0, "--fail-on not reached exits 0", str(p.returncode))

        # Sniffing from content alone: one file of each format, renamed x.txt.
        with tarfile.open(SAMPLE) as tar:
            seen = set()
            for m in tar.getmembers():
                if not m.isfile() or m.name.endswith(".gz"):
                    continue
                fmt = fmt_of(m.name)
                if fmt in seen:
                    continue
                seen.add(fmt)
                d = os.path.join(tmp, "sniff-" + fmt)
                os.mkdir(d)
                with open(os.path.join(d, "x.txt"), "wb") as w:
                    w.write(tar.extractfile(m).read())
                got = run("sniff", os.path.join(d, "x.txt")).stdout.split("\t")
                check(got[1] == fmt, "sniff %s renamed x.txt" % fmt, str(got))
            check(len(seen) == 7, "sample has all seven formats", str(sorted(seen)))
    finally:
        shutil.rmtree(tmp)
    print("sample: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
