#!/usr/bin/env python3
"""scenarios.py BIN: end-to-end checks of `inquest analyze` on every scenario of
the fixtures generator (fixtures/gen/make_bundle.py), over several seeds and
format variants, against the ground truth the generator writes (truth.json).

For each case: generate the bundle (scale 1) into a temporary directory, run
`BIN analyze`, and assert the verdicts, the failure order, the first OOM's pod
and time (to the second), the 5xx surge window, the boundaries and their
attributions, the conditions, the questions' data, the limits computed from
the evidence (for vision models too: images and pixels in flight, from a
request log written for the pack) and that every evidence file:line of the
findings is a line of the bundle holding the evidence text.

Checks the analyzer is known to get wrong are listed in KNOWN_FAILURES (the
detector owner fixes them; the analyzer is not changed from here). A listed
check that fails counts as "expected failure"; one that passes is reported
as "unexpected pass" so the list can be pruned. Prints
"scenarios: N passed, N failed" and exits 1 when anything failed.

Clock skew: the generator skews one node's clocks by a few seconds for seeds
other than 1. When findings.json's clock_skew reports that node's offset
(within a second of the truth), times are compared in reference time (the
LB's clock); otherwise they are compared with the node's logged time, and a
note is printed.
"""
import datetime
import fnmatch
import re
import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GEN = os.path.join(ROOT, "fixtures", "gen", "make_bundle.py")

# (scenario, seed, variant).  Variant v picks lb = [ingress-nginx, envoy,
# haproxy, aws-alb][v % 4], kernel = [kern.log, dmesg -T, journalctl short-iso][v % 3],
# gpu = [nvidia-smi csv, dcgm prometheus-text][(v // 2) % 2],
# cri = [containerd, cri-o][(v // 3) % 2].  Seed 1 has no skew; other seeds skew
# one node (seed 2: gpu-node-3 -4 s, 3: gpu-node-1 +2 s, 4: gpu-node-2 -3 s,
# 5: gpu-node-3 +4 s).
CASES = [
    ("cascade", 1, 0), ("cascade", 2, 4), ("cascade", 2, 5), ("cascade", 4, 3),
    ("single-oom", 2, 1), ("single-oom", 3, 6),
    ("host-oom", 2, 2), ("host-oom", 5, 3),
    ("flood", 2, 0), ("flood", 3, 1), ("flood", 4, 2),
    # a flood spread over six clients (no single one stands out) beside a
    # GPU a training job holds at 99 % all along (high memory, no sawtooth)
    ("flood", 5, 0, ["--flood-clients", "6", "--busy-gpu"]),
    # healthy days with a user program's Xid 13 and (odd seeds) an Xid 63
    # row remapping event that no worker died of
    ("healthy", 2, 0), ("healthy", 3, 3),
    ("xid", 2, 1), ("xid", 3, 4),
    ("fragmentation", 2, 2), ("fragmentation", 5, 7),
    ("vision-cascade", 1, 0), ("vision-cascade", 3, 5),
]

# Checks the analyzer currently gets wrong: "case-pattern: check-pattern"
# (fnmatch on "scenario/seed/vN: check name") -> reason.
KNOWN_FAILURES = {
}

BIN = None
passed = failed = xfailed = 0
xpassed = []
notes = []


def known(case, what):
    key = "%s: %s" % (case, what)
    for pat, why in KNOWN_FAILURES.items():
        if fnmatch.fnmatchcase(key, pat):
            return why
    return None


def check(case, cond, what, detail=""):
    global passed, failed, xfailed
    why = known(case, what)
    if cond:
        passed += 1
        if why:
            xpassed.append("%s: %s" % (case, what))
    elif why:
        xfailed += 1
        print("XFAIL %s: %s (%s) %s" % (case, what, why, str(detail)[:600]))
    else:
        failed += 1
        print("FAIL %s: %s %s" % (case, what, str(detail)[:1500]))


def sec(t):
    """An RFC 3339 time truncated to the second (for comparisons to the second)."""
    return t[:19] if t else t


def secs(t):
    """An RFC 3339 UTC time as seconds since the epoch."""
    return datetime.datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp()


def bundle_lines(path):
    """{"bundle!member" or "bundle!nested!member": [lines]} of every file in the
    bundle, .gz members and nested .tar.gz archives opened."""
    out = {}
    name = os.path.basename(path)

    def walk(tf, prefix):
        for m in tf.getmembers():
            if not m.isfile():
                continue
            data = tf.extractfile(m).read()
            if m.name.endswith(".tar.gz"):
                with tarfile.open(fileobj=io.BytesIO(data)) as inner:
                    walk(inner, "%s%s!" % (prefix, m.name))
                continue
            if m.name.endswith(".gz"):
                data = gzip.decompress(data)
            out[prefix + m.name] = data.decode("utf-8", "replace").split("\n")

    with tarfile.open(path) as tf:
        walk(tf, name + "!")
    return out


def evidence_objects(x):
    """Every {"file", "line", ...} object anywhere under x."""
    if isinstance(x, dict):
        if "file" in x and "line" in x and isinstance(x.get("line"), int):
            yield x
        for v in x.values():
            yield from evidence_objects(v)
    elif isinstance(x, list):
        for v in x:
            yield from evidence_objects(v)


def text_matches(ev, ls):
    """The evidence's text (its first line, up to 60 characters, a cut's "…"
    dropped) stands verbatim at its line of the file's lines ls, or within
    the nlines lines from it; a docker json-file line holds it JSON-escaped
    (the evidence quotes the decoded log)."""
    text = ev.get("text")
    if text is None:
        return True
    i = ev["line"] - 1
    span = "\n".join(ls[i:i + max(1, ev.get("nlines") or 1)])
    probe = text.split("\n")[0].rstrip("…").strip()[:60]
    forms = {probe, json.dumps(probe)[1:-1], json.dumps(probe, ensure_ascii=False)[1:-1], probe.replace('"', '\\"')}
    return not probe or any(f in span for f in forms)


def by_id(items):
    return {x["id"]: x for x in items or []}


def check_case(scenario, seed, variant, extra=(), tmp=None):
    case = "%s/%d/v%d%s" % (scenario, seed, variant, "".join(" " + a for a in extra))
    d = os.path.join(tmp, case.replace("/", "-").replace(" ", "_"))
    os.makedirs(d)
    bundle = os.path.join(d, "bundle.tar.gz")
    tpath = os.path.join(d, "truth.json")
    subprocess.run([sys.executable, GEN, "--out", bundle, "--truth", tpath, "--scenario", scenario,
                    "--seed", str(seed), "--variant", str(variant)] + list(extra), check=True, capture_output=True)
    truth = json.load(open(tpath))
    out = os.path.join(d, "out")
    p = subprocess.run([BIN, "analyze", bundle, "-o", out, "--quiet"], capture_output=True, text=True)
    check(case, p.returncode == 0, "analyze exits 0", p.stderr)
    if p.returncode != 0:
        return
    f = json.load(open(os.path.join(out, "findings.json")))
    pats = by_id(f["patterns"])
    lines = bundle_lines(bundle)

    # -- coverage and formats -----------------------------------------------------------
    b = f["bundle"]
    check(case, b["files"] == len(truth["files"]), "bundle.files", "%s != %s" % (b["files"], len(truth["files"])))
    check(case, b["unknown_files"] == [], "no unknown files", b["unknown_files"])
    fm = truth["formats"]
    want_fmt = {"lb": fm["lb"], "gpu": {"nvidia-smi-csv": "nvidia-smi-csv",
                                        "dcgm-prometheus": "prometheus-text"}[fm["gpu"]], "kern": "kernel"}
    for k, v in want_fmt.items():
        check(case, b["formats"].get(v, 0) >= (1 if k == "lb" else 3), "format %s sniffed as %s" % (fm[k], v),
              b["formats"])

    # -- clock skew: which clock the node times are compared in -------------------------
    reported = {s["node"]: s for s in f.get("clock_skew") or []}
    true_skew = {sk["node"]: sk["offset_s"] for sk in truth["clock_skew"]}
    corrected = {}
    for node, r in reported.items():
        # a correction inquest applied must be the node's true offset (within the LB's 1 s resolution)
        if r.get("corrected"):
            check(case, abs(r["offset_s"] - true_skew.get(node, 0.0)) <= 1.0, "clock_skew of %s" % node,
                  "%s vs truth %s" % (r, true_skew.get(node, 0.0)))
    for node, off in true_skew.items():
        r = reported.get(node) or {}
        corrected[node] = bool(r.get("corrected")) and abs(r["offset_s"] - off) <= 1.0
        if not corrected[node]:
            notes.append("%s: %s skewed %+gs; inquest reports %s: node times compared as logged"
                         % (case, node, off, r.get("offset_s") if r else None))

    def want_time(rec):
        """The time inquest should report for a truth record of a node."""
        if rec.get("logged_time") and not corrected.get(rec.get("node")):
            return rec["logged_time"]
        return rec["time"]

    # -- verdicts -----------------------------------------------------------------------
    for pid, v in truth["expected_verdicts"].items():
        got = pats.get(pid, {}).get("verdict")
        check(case, got == v, "verdict " + pid, "%s != %s; summary: %s" % (got, v, pats.get(pid, {}).get("summary")))
    pat = pats.get("gpu-oom-cascade")
    if pat is None:
        return
    sig = by_id(pat["signals"])
    qs = by_id(pat["questions"])

    # -- CUDA OOM lines, OOM events, failure order --------------------------------------------
    cu = sig.get("cuda-oom", {})
    want_ev = sorted((o["file"], o["line"]) for o in truth["cuda_oom"])
    check(case, bool(cu.get("present")) == bool(truth["cuda_oom"]), "cuda-oom present iff CUDA OOM lines",
          cu.get("count"))
    check(case, sorted((e["file"], e["line"]) for e in cu.get("evidence", [])) == want_ev,
          "cuda-oom evidence file:line", [(e["file"], e["line"]) for e in cu.get("evidence", [])][:5])
    ev = [(o["pod"], o["node"], sec(o["time"])) for o in pat.get("oom_events") or []]
    check(case, ev == [(o["pod"], o["node"], sec(want_time(o))) for o in truth["cuda_oom"]],
          "oom_events pod, node and time", ev)
    order = truth["failure_order"]
    c = pat.get("cascade")
    if order:
        fo = (c or {}).get("failure_order") or []
        check(case, [x["pod"] for x in fo] == order, "cascade.failure_order", fo)
        firsts = [next(o for o in truth["cuda_oom"] if o["pod"] == pd) for pd in order]
        check(case, [sec(x["time"]) for x in fo] == [sec(want_time(o)) for o in firsts],
              "time of each pod's first OOM", "%s vs %s" % ([x["time"] for x in fo], [want_time(o) for o in firsts]))
        first = truth["first_oom"]
        check(case, fo[:1] and (fo[0]["pod"], fo[0]["node"], sec(fo[0]["time"])) ==
              (first["pod"], first["node"], sec(want_time(first))),
              "first OOM pod, node and time", "%s vs %s" % (fo[:1], first))
        if len(order) >= 2:
            check(case, c["pods_affected"] == len(order) and c["nodes_affected"] == len({o["node"] for o in firsts}),
                  "pods and nodes affected", (c["pods_affected"], c["nodes_affected"]))
    else:
        check(case, c is None or not c.get("failure_order"), "no cascade", c)
    fq = (qs.get("failure-order") or {}).get("data") or {}
    check(case, (fq.get("pods") or []) == truth["questions"]["failure-order"]["pods"], "failure-order data pods",
          fq.get("pods"))
    if order:
        fd = fq.get("first") or {}
        first = truth["first_oom"]
        check(case, (fd.get("pod"), fd.get("node"), sec(fd.get("time"))) ==
              (first["pod"], first["node"], sec(want_time(first))), "failure-order data first", fd)

    # -- the 5xx surge --------------------------------------------------------------------------
    s = pat.get("lb_5xx_surge")
    ts = truth["lb_5xx_surge"]
    if ts["expected"] is True:
        check(case, s is not None, "lb_5xx_surge present")
        if s:
            check(case, s["start"] <= ts["start_max"] and s["end"] >= ts["end_min"], "surge window contains the failures",
                  "surge %s..%s, want start <= %s and end >= %s" % (s["start"], s["end"], ts["start_max"], ts["end_min"]))
            # from its first 5xx to its last (to the second: some load
            # balancers log whole seconds), both cited
            check(case, (s["start"][:19], s["end"][:19]) == (ts["first_5xx"][:19], ts["last_5xx"][:19]),
                  "surge from the first 5xx to the last", "%s..%s vs %s..%s" % (
                      s["start"], s["end"], ts["first_5xx"], ts["last_5xx"]))
            ev = s.get("evidence") or []
            check(case, len(ev) >= 2 and ev[0]["time"] == s["start"] and ev[-1]["time"] == s["end"],
                  "surge evidence cites its first and last 5xx", [(e["time"], e["line"]) for e in ev])
    elif ts["expected"] is False:
        check(case, s is None, "no lb_5xx_surge", s and (s["start"], s["end"], s["peak_per_minute"]))
    iq = (qs.get("impact") or {}).get("data") or {}
    check(case, iq.get("failed_requests") == truth["questions"]["impact"]["failed_requests"] ==
          (pat.get("impact") or {}).get("failed_requests"), "impact failed_requests",
          "%s / %s vs truth %s" % (iq.get("failed_requests"), (pat.get("impact") or {}).get("failed_requests"),
                                   truth["questions"]["impact"]["failed_requests"]))
    bq = (qs.get("batching-ceilings") or {}).get("data") or {}
    check(case, bq.get("batch_cap") == truth["questions"]["batching-ceilings"]["batch_cap"], "batching-ceilings batch_cap",
          bq.get("batch_cap"))

    # -- limits computed from the evidence ------------------------------------------------------
    tl = truth.get("limits")
    lim = pat.get("limits")
    if tl is None:
        check(case, lim is None, "no limits without a CUDA OOM death", lim)
    else:
        val = lambda o: o["value"] if isinstance(o, dict) else None
        for part in ("batch", "tokens_in_flight"):
            for k in ("largest_completed", "smallest_failed"):
                got = val(((lim or {}).get(part) or {}).get(k))
                check(case, got == tl[part][k], "limits %s %s" % (part, k), "%s vs truth %s" % (got, tl[part][k]))
        got = ((lim or {}).get("kv_cache") or {}).get("capacity_tokens")
        check(case, got == tl["capacity_tokens"], "limits kv_cache capacity_tokens", "%s vs truth %s" % (got, tl["capacity_tokens"]))
        props = {x["setting"]: x for x in (lim or {}).get("proposals") or []}
        check(case, sorted(props) == sorted(tl["proposals"]), "limits proposals made", sorted(props))
        for st, want in tl["proposals"].items():
            x = props.get(st) or {}
            check(case, x.get("value") == want and str(want) in (x.get("arithmetic") or ""),
                  "limits proposal %s (value and arithmetic)" % st, "%s vs truth %s" % (x.get("arithmetic"), want))
        for part in ("batch", "tokens_in_flight"):
            for k in ("largest_completed", "smallest_failed"):
                o = ((lim or {}).get(part) or {}).get(k)
                check(case, o is None or len(o.get("evidence") or []) == 1, "limits %s %s has its evidence" % (part, k), o)
        # vision: images and pixels in flight that completed / failed
        tv, lv = tl.get("vision"), (lim or {}).get("vision")
        if tv is None:
            check(case, lv is None, "no vision limits without a request log of images", lv and lv.get("requests_logged"))
        else:
            check(case, isinstance(lv, dict) and lv.get("requests_logged", 0) > 0, "vision limits present", lv)
            lv = lv or {}
            oom_lines = {(o["file"], o["line"]) for o in truth["cuda_oom"]}
            for part in ("images_in_flight", "pixels_in_flight"):
                for k in ("largest_completed", "smallest_failed"):
                    o = (lv.get(part) or {}).get(k)
                    check(case, val(o) == tv[part][k], "limits vision %s %s" % (part, k),
                          "%s vs truth %s" % (val(o), tv[part][k]))
                    ev = (o or {}).get("evidence") or []
                    check(case, 1 <= len(ev) <= 6 and all('"vllm.mm_request"' in (e.get("text") or "")
                                                          for e in ev[(k == "smallest_failed"):]),
                          "limits vision %s %s evidence: request-log lines" % (part, k), [e.get("text", "")[:60] for e in ev])
                    if k == "smallest_failed" and ev:
                        check(case, (ev[0]["file"], ev[0]["line"]) in oom_lines,
                              "limits vision %s smallest_failed evidence starts with the death" % part, ev[0])
            check(case, ((lv.get("images_in_flight") or {}).get("smallest_failed") or {}).get("requests") ==
                  tv["failed_requests"], "limits vision requests in flight at the death",
                  "%s vs truth %s" % (((lv.get("images_in_flight") or {}).get("smallest_failed") or {}).get("requests"),
                                      tv["failed_requests"]))
            cur = lv.get("current") or {}
            check(case, (cur.get("limit_mm_per_prompt"), cur.get("max_pixels")) ==
                  (tv["current"]["limit_mm_per_prompt"], tv["current"]["max_pixels"]), "limits vision current settings", cur)
            for st in ("--limit-mm-per-prompt", "max_pixels"):
                x = props.get(st) or {}
                check(case, x.get("current") == str(tv["current"][{"--limit-mm-per-prompt": "limit_mm_per_prompt",
                                                                    "max_pixels": "max_pixels"}[st]]),
                      "limits proposal %s current" % st, x.get("current"))

    # -- boundaries -----------------------------------------------------------------------------
    bd = by_id(pat["boundaries"])
    ho = bd.get("host-oom", {})
    kills = truth["host_oom"] + truth["decoys"]["host_oom"]
    check(case, bool(ho.get("present")) == bool(kills), "host-oom boundary present iff a kernel OOM kill",
          ho.get("count"))
    att = ho.get("attributed_to") or []
    for k in kills:
        worker = k["container"] == "vllm"
        hit = [a for a in att if (a.get("node"), a.get("pod"), a.get("container"), a.get("process"), a.get("pid")) ==
               (k["node"], k["pod"], k["container"], k["victim"], k["pid"])]
        check(case, bool(hit) and all(a.get("serving_worker") is worker for a in hit),
              "host-oom attribution of %s/%s %s pid %d" % (k["pod"], k["container"], k["victim"], k["pid"]), att)
        same = [a for a in att if (a.get("node"), a.get("pod"), a.get("pid")) == (k["node"], k["pod"], k["pid"])]
        # the kernel log cuts its times to the second: on a corrected node
        # the time is the cut one minus a fractional offset, so it lies up to
        # a second (and the estimate's error) before the true time
        check(case, any(a.get("time") and -1.05 <= secs(a["time"]) - secs(want_time(k)) <= 0.05 for a in same),
              "host-oom attribution time of %s pid %d" % (k["pod"], k["pid"]), "%s vs %s" % (same, want_time(k)))
        check(case, any(e["file"] == k["file"] and e["line"] == k["line"] for e in ho.get("evidence", [])),
              "host-oom evidence %s:%d" % (k["file"].split("!")[-1], k["line"]))
    check(case, ho.get("count", 0) == len(kills), "host-oom count (one per kill)",
          "%s != %d: %s" % (ho.get("count"), len(kills), att))
    if truth["decoys"]["host_oom"] and not truth["host_oom"]:
        check(case, all(a.get("container") == "log-shipper" and a.get("serving_worker") is False for a in att),
              "host-oom attributed to the sidecar only", att)
    fl = bd.get("ingress-flood", {})
    check(case, bool(fl.get("present")) == bool(truth["flood"]), "ingress-flood present iff a flood", fl.get("count"))
    if truth["flood"]:
        # exactly the flood's clients (the truth counts all their
        # requests, the boundary those in the surge: the order of clients
        # of one rate may differ)
        want = sorted(x["ip"] for x in truth["flood"]["clients"])
        got = sorted(x.get("client") for x in fl.get("top_clients") or [])
        check(case, got == want, "ingress-flood top clients", "%s vs %s" % (got, want))
        check(case, fl.get("heavy_clients") == len(want) and fl.get("reasons") == [],
              "ingress-flood: the flood's clients are the heavy ones, no test failed",
              "%s %s" % (fl.get("heavy_clients"), fl.get("reasons")))
        check(case, fl.get("refused_share") is None or fl["refused_share"] >= 0.5,
              "ingress-flood: the LB refused the failed requests itself", fl.get("refused_share"))
    elif truth["lb_5xx_surge"]["expected"]:
        # a surge of dying workers is not a flood, and the boundary says why
        check(case, "cuda_oom" in (fl.get("reasons") or []) or "host_oom" in (fl.get("reasons") or []),
              "ingress-flood ruled out because workers died", fl.get("reasons"))

    # -- conditions and look-alikes ---------------------------------------------------------------
    cond = by_id(pat["conditions"])
    for cid, want in truth["conditions"].items():
        check(case, bool(cond.get(cid, {}).get("present")) == want, "condition %s" % cid,
              cond.get(cid, {}).get("detail"))
    saw = sig.get("gpu-mem-sawtooth", {})
    if not truth["cuda_oom"]:
        check(case, not saw.get("present"), "no gpu-mem-sawtooth without a CUDA OOM (steady or dropped GPU memory)",
              pat.get("sawtooth"))
        check(case, not sig.get("cascade", {}).get("present"), "no cascade signal")

    # -- the Xid (gpu-hardware-fault pattern) ----------------------------------------------------------
    hw = pats.get("gpu-hardware-fault", {})
    xid = by_id(hw.get("signals")).get("gpu-xid", {})
    xk = [x for x in truth["xid"] if x.get("what") == "xid"]
    check(case, bool(xid.get("present")) == bool(xk), "gpu-xid present iff an Xid", xid.get("count"))
    for x in xk:
        check(case, any(e["file"] == x["file"] and e["line"] == x["line"] for e in xid.get("evidence", [])),
              "gpu-xid evidence %s:%d (Xid %d)" % (x["file"].split("!")[-1], x["line"], x["code"]),
              [(e["file"], e["line"]) for e in xid.get("evidence", [])])
    # a fatal Xid is the incident's only when a worker on its node died with it
    # (NVIDIA's catalogue: 13, 31, 43, 45 are the application's own faults)
    fatal = [x for x in xk if x["code"] in (46, 48, 61, 62, 63, 64, 74, 79, 94, 95, 119, 120, 121, 140, 143, 154)]
    ties = hw.get("ties") or {}
    dead = [x for x in truth["xid"] if x.get("what") == "xid_worker"]
    fat = by_id(hw.get("signals")).get("gpu-xid-fatal", {})
    check(case, fat.get("count", 0) == len(fatal), "gpu-xid-fatal counts the fatal Xids", (fat.get("count"), len(fatal)))
    if dead:
        tied = [(t["fault"]["evidence"]["file"], t["fault"]["evidence"]["line"], d["pod"])
                for t in ties.get("ties", []) for d in t["deaths"]]
        for x in fatal:
            check(case, (x["file"], x["line"], dead[0]["pod"]) in tied,
                  "Xid %d at line %d tied to %s's death" % (x["code"], x["line"], dead[0]["pod"]), tied)
    else:
        check(case, ties.get("tied") == 0 and ties.get("untied") == len(fatal),
              "no worker died: %d fatal Xid(s) left untied" % len(fatal), (ties.get("tied"), ties.get("untied")))

    # -- every evidence file:line is a line of the bundle with the evidence text --------------------------
    bad = []
    n = 0
    for pt in f["patterns"]:
        for e in evidence_objects(pt):
            n += 1
            ls = lines.get(e["file"])
            if ls is None or not 1 <= e["line"] <= len(ls) or not text_matches(e, ls):
                bad.append((e["file"], e["line"], (e.get("text") or "")[:80],
                            None if ls is None or not 1 <= e["line"] <= len(ls) else ls[e["line"] - 1][:80]))
    check(case, n > 0 and not bad, "every evidence file:line holds its text (%d evidence)" % n, bad[:5])


def main():
    global BIN
    if len(sys.argv) != 2:
        sys.stderr.write("usage: scenarios.py BIN\n")
        return 2
    BIN = os.path.abspath(sys.argv[1])
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="iq-scenarios-")
    try:
        for c in CASES:
            check_case(*c, tmp=tmp)
    finally:
        shutil.rmtree(tmp)
    for nt in notes:
        print("note: " + nt)
    for x in xpassed:
        print("XPASS %s (listed in KNOWN_FAILURES; remove it)" % x)
    print("scenarios: %d passed, %d failed (%d expected failures, %d cases, %.1f s)"
          % (passed, failed, xfailed, len(CASES), time.time() - t0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
