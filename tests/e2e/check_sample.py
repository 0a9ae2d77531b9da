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


def ms(t):
    """Milliseconds since the epoch of an RFC 3339 UTC time with milliseconds."""
    import datetime
    d = datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    return int(d.timestamp() * 1000)


def check_detectors(pat):
    """The detectors' findings against the scenario the generator simulated."""
    sig = {s["id"]: s for s in pat["signals"]}
    for sid in ("cuda-oom", "crashloop", "lb-5xx-surge", "gpu-mem-sawtooth", "cascade"):
        check(sid in sig and sig[sid]["present"], "signal %s present" % sid)
    first = TRUTH["cuda_oom"][0]
    c = pat["cascade"]
    check([o["pod"] for o in c["failure_order"]] == TRUTH["failure_order"], "failure order",
          str(c["failure_order"]))
    check((c["failure_order"][0]["pod"], c["failure_order"][0]["node"], c["failure_order"][0]["time"]) ==
          (first["pod"], first["node"], first["time"]), "first OOM pod, node and time")
    firsts = {}
    for o in TRUTH["cuda_oom"]:
        firsts.setdefault(o["pod"], o["time"])
    check([o["time"] for o in c["failure_order"]] == [firsts[p] for p in TRUTH["failure_order"]],
          "time of each pod's first OOM")
    check(c["pods_affected"] == 3 and c["nodes_affected"] == 3, "pods and nodes affected")

    # The 5xx surge spans the deaths: from the first 5xx of the LB log to its
    # last (ingress-nginx logs whole seconds), and holds every 502 and 503.
    s = pat["lb_5xx_surge"]
    ts = TRUTH["lb_5xx_surge"]
    check(s is not None and (s["start"][:19], s["end"][:19]) == (ts["first_5xx"][:19], ts["last_5xx"][:19]),
          "surge window", str(s and (s["start"], s["end"])))
    check(s["evidence"][0]["time"] == s["start"] and s["evidence"][-1]["time"] == s["end"],
          "surge evidence: its first and last 5xx", str([e["time"] for e in s["evidence"]]))
    check(s["count_502"] == TRUTH["counts"]["lb_502"] and s["count_503"] == TRUTH["counts"]["lb_503"],
          "surge counts", str((s["count_502"], s["count_503"])))
    check(all(e["file"].endswith("lb/ingress-nginx-access.log") for e in s["evidence"]) and s["evidence"],
          "surge evidence from the LB log")

    # One sawtooth per GPU, a cycle per OOM death of the pod on that node.
    deaths = {}
    for o in TRUTH["cuda_oom"]:
        deaths.setdefault(o["node"], []).append(o["pod"])
    saw = {t["node"]: t for t in pat["sawtooth"]}
    check(sorted(saw) == sorted(deaths), "sawtooth per GPU node", str(sorted(saw)))
    for node, pods in deaths.items():
        t = saw.get(node)
        if t:
            check(t["cycles"] == len(pods), "sawtooth cycles on " + node, str(t["cycles"]))
            check([d["pod"] for d in t["deaths"]] == pods, "sawtooth drops tied to deaths on " + node)
            check(t["peak_ratio"] >= 0.99, "sawtooth peak on " + node)

    loops = {c["pod"]: c for c in pat["crash_loops"] if c["crash_loop"]}
    check(sorted(loops) == sorted(TRUTH["failure_order"]), "crash loops", str(sorted(loops)))

    # The sidecar's cgroup OOM kill is a boundary attributed to the sidecar
    # only: it does not rule the cascade out.
    b = {x["id"]: x for x in pat["boundaries"]}
    ho = b["host-oom"]
    decoy = TRUTH["decoys"]["host_oom"][0]
    check(ho["present"] and ho["count"] == 1, "host-oom boundary count", str(ho["count"]))
    a = ho["attributed_to"][0] if ho["attributed_to"] else {}
    check((a.get("node"), a.get("process"), a.get("pid"), a.get("serving_worker")) ==
          (decoy["node"], decoy["victim"], decoy["pid"], False), "host-oom attribution", str(a))
    check(any(e["file"] == decoy["file"] and e["line"] == decoy["line"] for e in ho["evidence"]),
          "host-oom evidence file:line", str(ho["evidence"]))
    check(not b["ingress-flood"]["present"], "no ingress flood")

    cond = {x["id"]: x for x in pat["conditions"]}
    check(cond["static-vram-preallocation"]["present"] is True, "static VRAM pre-allocation (0.95)")
    check(cond["no-backpressure"]["present"] is True, "no backpressure (no 429)")
    check(cond["no-expandable-segments"]["present"] is True, "no expandable segments")
    check(all(e["file"] and e["line"] for x in pat["conditions"] for e in x["evidence"]),
          "condition evidence has file and line")

    qs = {q["id"]: q for q in pat["questions"]}
    for qid in ("max-batch-and-seq", "batching-ceilings", "paged-attention", "failure-order", "impact", "recovery"):
        check(qid in qs and qs[qid]["answer"], "question " + qid)
    check(qs["failure-order"]["data"]["pods"] == TRUTH["failure_order"], "failure-order data")
    failed = TRUTH["counts"]["lb_502"] + TRUTH["counts"]["lb_503"] + TRUTH["counts"]["lb_504"]
    check(qs["impact"]["data"]["failed_requests"] == failed == pat["impact"]["failed_requests"],
          "impact failed requests", str(qs["impact"]["data"]))
    check(qs["paged-attention"]["data"]["engine"] == "vllm" and qs["paged-attention"]["data"]["enabled"] is True
          and qs["paged-attention"]["data"]["memory_fraction"] == 0.95, "paged attention data")
    check(qs["batching-ceilings"]["data"]["batch_cap"] == "256", "batch cap 256")
    check(qs["max-batch-and-seq"]["data"]["window_end"] == first["time"], "max-batch window ends at first OOM")
    restarts = [(pod, c["restart"]) for pod, cs in TRUTH["timeline"]["containers"].items()
                for c in cs if c["restart"] >= 1 and c["ready"]]
    rec = pat["recovery"]
    check(sorted((r["pod"], r["restart"]) for r in rec) == sorted(restarts), "recovery per restart",
          str(len(rec)))
    ready = {(pod, c["restart"]): c for pod, cs in TRUTH["timeline"]["containers"].items() for c in cs}
    bases = {}
    for r in rec:
        # the generator's ready time is when the readiness probe passed
        # (Kubernetes marked the pod Ready). The latest instance's Ready
        # condition says so in whole seconds; for the earlier ones the
        # bundle has only the engine's "Application startup complete":
        # inquest estimates, and the truth must lie in the window it gives
        t = ready.get((r["pod"], r["restart"]))
        basis = r.get("ready_basis")
        bases[basis] = bases.get(basis, 0) + 1
        if t is None:
            check(False, "ready time of %s restart %d" % (r["pod"], r["restart"]), "not in the truth")
            continue
        d = ms(t["ready"]) - ms(r["ready"])
        if basis == "ready-condition":
            good = 0 <= d < 1000
        elif basis == "estimate-engine-ready-probe":
            w = r["ready_window"]
            good = (ms(w["earliest"]) - 1000 <= ms(t["ready"]) <= ms(w["latest"]) + 1000
                    and abs(d) <= w["probe_period_s"] * 500 + 1000 and w["probe_period_from"] == "manifest")
        else:
            good = False
        check(good, "ready time of %s restart %d" % (r["pod"], r["restart"]),
              "%s (%s) vs %s" % (r["ready"], basis, t["ready"]))
    # the sample's pods.json gives the current instances' Ready condition
    check(bases.get("ready-condition") == 3 and bases.get("estimate-engine-ready-probe") == len(rec) - 3,
          "ready bases", str(bases))


def check_phases(pat):
    ph = pat["phases"]
    first = TRUTH["cuda_oom"][0]
    check(ph["outage_begins"]["time"] == first["time"] and
          ph["outage_begins"]["evidence"][0]["line"] == first["line"], "outage begins at the first OOM")
    lowered = sorted((c["start"], pod) for pod, cs in TRUTH["timeline"]["containers"].items() for c in cs
                     if c["max_num_seqs"] < 256)
    m = ph["mitigated"]
    check(m is not None and 0 <= ms(m["time"]) - ms(lowered[0][0]) < 10000 and
          ("/inference_%s_" % lowered[0][1]) in m["evidence"][0]["file"],
          "mitigated when the first worker with a lower max_num_seqs started", str(m and m["time"]))
    d = ph["detected"]
    check(d is not None and ms(first["time"]) <= ms(d["time"]) <= ms(first["time"]) + 60000, "detected within a minute",
          str(d and d["time"]))
    e = ph["outage_ends"]
    check(e is not None and e["time"] <= pat["lb_5xx_surge"]["end"] and e["time"] >= "2026-11-30T14:19:00",
          "outage ends with the surge", str(e and e["time"]))


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
        want_verdict = {"match": "confirmed"}.get(TRUTH["expected_verdict"], TRUTH["expected_verdict"])
        check(pat["verdict"] == want_verdict, "verdict", "%s != %s" % (pat["verdict"], want_verdict))
        check(0.5 < pat["confidence"] <= 1, "confidence", str(pat["confidence"]))

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

        check_detectors(pat)
        check_phases(pat)

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
                            "k8s-pods" if p.endswith("cluster/pods.json") else
                            "k8s-manifest" if p.endswith("cluster/deployments.yaml") else
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
        # identity: every 502 attempt of the LB maps to a pod and its node
        up = query(db, "SELECT pod, node, count(*) AS n FROM upstream_pods WHERE status = 502"
                       " GROUP BY pod, node ORDER BY pod")
        pods = {p["pod"]: p for p in TRUTH["pods"]}
        check([r["pod"] for r in up] == sorted(pods) and all(r["node"] == pods[r["pod"]]["node"] for r in up),
              "502s joined to pods and nodes through pod IPs", str(up))
        g = query(db, "SELECT node, pci_key FROM gpus ORDER BY node")
        check(len(g) == 3 and all(len(r["pci_key"]) == 5 for r in g), "gpus view with pci keys", str(g))
        e = query(db, "SELECT count(*) AS n FROM k8s_events WHERE reason = 'BackOff'")[0]
        check(e["n"] >= 3, "BackOff events", str(e))

        # The postmortem's evidence table names every OOM line: its path
        # inside the bundle and its line.
        md = open(os.path.join(out, "postmortem.md"), encoding="utf-8").read()
        for fpath, line, _ in want:
            rel = fpath.split("!", 1)[1]
            check("| `%s` | %d |" % (rel, line) in md, "postmortem cites %s:%d" % (rel, line))
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
        # Which pattern reached which verdict is said on stderr, even with --quiet.
        p = subprocess.run([BIN, "analyze", SAMPLE, "-o", out, "--quiet", "--fail-on",
                            "oom_no_cascade,confirmed"], capture_output=True, text=True)
        check(p.returncode == 1, "--fail-on reached exits 1", str(p.returncode))
        check("inquest: --fail-on oom_no_cascade,confirmed: gpu-oom-cascade is confirmed (exit 1)\n" in p.stderr,
              "--fail-on names the pattern that reached the verdict", p.stderr)
        p = subprocess.run([BIN, "analyze", SAMPLE, "-o", out, "--quiet", "--fail-on", "ruled_out_flood,inconclusive"],
                           capture_output=True, text=True)
        check(p.returncode == 0 and p.stderr == "", "--fail-on not reached exits 0, silently", str(p.returncode))

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
            check(len(seen) == 9, "sample has all nine formats", str(sorted(seen)))
    finally:
        shutil.rmtree(tmp)
    print("sample: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
