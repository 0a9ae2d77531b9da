#!/usr/bin/env python3
"""edges.py BIN: the windows of the pack at their edges, through the whole
binary. A load-balancer log with a quiet baseline and bursts of 502s placed
inside one tumbling minute or split by its boundary, with quiet spells
exactly as long as the session gap (and one bucket longer), and the same
lines shuffled: the surge must be found, start at its first 5xx, end at its
last and count exactly as the windows' documented edges say
(rules/README.md), whatever the line order."""
import json, os, random, shutil, subprocess, sys, tempfile

BIN = sys.argv[1]
passed = failed = 0


def check(what, got, want):
    global passed, failed
    if got == want:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s: got %r, expected %r" % (what, got, want))


def line(sec, status):
    """An ingress-nginx line at 14:00:00 + sec on 2026-11-30."""
    m, s = divmod(sec, 60)
    up = "10.244.1.10:8000"
    return ('10.0.0.%d - - [30/Nov/2026:14:%02d:%02d +0000] "POST /v1/completions HTTP/1.1" %d 150 "-" '
            '"load/1.0" 300 0.050 [inference-vllm-8000] [] %s 150 0.050 %d req%06d'
            % (1 + sec % 7, m, s, status, up, status, sec * 10 + status % 10))


def bundle(tmp, name, events, shuffle=False):
    """events: (second, status) pairs; plus a 200 every 6 s from 14:00 to 14:24."""
    rows = [(t, 200) for t in range(0, 24 * 60, 6)] + list(events)
    rows.sort()
    lines = [line(t, st) for t, st in rows]
    if shuffle:
        random.Random(7).shuffle(lines)
    d = os.path.join(tmp, name, "lb")
    os.makedirs(d)
    with open(os.path.join(d, "ingress-nginx-access.log"), "w") as f:
        f.write("\n".join(lines) + "\n")
    out = os.path.join(tmp, "o-" + name)
    subprocess.run([BIN, "analyze", os.path.join(tmp, name), "-o", out, "--quiet"], check=True)
    with open(os.path.join(out, "findings.json")) as f:
        doc = json.load(f)
    pat = [p for p in doc["patterns"] if p["id"] == "gpu-oom-cascade"][0]
    s = pat["lb_5xx_surge"] or {}
    return s.get("start"), s.get("end"), s.get("count_502")


def burst(minute, second=0, n=10):
    """n 502s at 14:minute:second (all at the same second)."""
    return [(minute * 60 + second, 502)] * n


tmp = tempfile.mkdtemp()
try:
    # tumbling window_s = 60, min_count = 5: six 502s in one bucket are a
    # surge, the same six split over two buckets are not. A 502 exactly at
    # 14:12:00 is in the 14:12 bucket, one at 14:13:00 in the next.
    check("six 502s from 14:12:00 to 14:12:59: one bucket",
          bundle(tmp, "inside", burst(12, 0, 3) + burst(12, 59, 3)),
          ("2026-11-30T14:12:00.000Z", "2026-11-30T14:12:59.000Z", 6))
    check("three at 14:11:59, three at 14:12:00: two buckets, no surge",
          bundle(tmp, "straddle", burst(11, 59, 3) + burst(12, 0, 3)), (None, None, None))
    check("three at 14:12:00, three at 14:13:00: the end is exclusive",
          bundle(tmp, "next", burst(12, 0, 3) + burst(13, 0, 3)), (None, None, None))
    # the surge runs from its first 5xx to its last, not to bucket edges
    on = burst(12) + burst(13, 30)
    check("bursts at 14:12:00 and 14:13:30", bundle(tmp, "on", on),
          ("2026-11-30T14:12:00.000Z", "2026-11-30T14:13:30.000Z", 20))
    check("bursts at 14:11:59 and 14:13:30", bundle(tmp, "before", burst(11, 59) + burst(13, 30)),
          ("2026-11-30T14:11:59.000Z", "2026-11-30T14:13:30.000Z", 20))
    # out of order: the same lines shuffled give the same surge
    check("shuffled lines", bundle(tmp, "shuffled", on, shuffle=True),
          ("2026-11-30T14:12:00.000Z", "2026-11-30T14:13:30.000Z", 20))
    # session max_gap_s = 120: two quiet buckets (14:14, 14:15) keep one surge
    gap2 = burst(12) + burst(13) + burst(16)
    check("quiet spell of exactly max_gap_s", bundle(tmp, "gap2", gap2),
          ("2026-11-30T14:12:00.000Z", "2026-11-30T14:16:00.000Z", 30))
    # three quiet buckets (180 s) end it before the third burst
    gap3 = burst(12) + burst(13) + burst(17)
    check("quiet spell one bucket longer", bundle(tmp, "gap3", gap3),
          ("2026-11-30T14:12:00.000Z", "2026-11-30T14:13:00.000Z", 20))

    # session max_gap_s = 1800 over the failure sequence: pod b dies exactly
    # 1800 s after pod a (same cascade), pod c 1801 s after b (not in it)
    def oom_bundle(name, deaths):
        for pod, sec in deaths:
            d = os.path.join(tmp, name, "var/log/pods/inference_%s_0000-%s/vllm" % (pod, pod))
            os.makedirs(d)
            h, r = divmod(sec, 3600)
            m, s2 = divmod(r, 60)
            t = "2026-11-30T%02d:%02d:%02d.000000000Z" % (12 + h, m, s2)
            with open(os.path.join(d, "0.log"), "w") as f:
                f.write("%s stdout F INFO starting\n" % t)
                f.write("%s stderr F torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
                        "2.00 GiB. GPU 0 has a total capacity of 79.14 GiB of which 1.19 GiB is free.\n" % t)
        out = os.path.join(tmp, "o-" + name)
        subprocess.run([BIN, "analyze", os.path.join(tmp, name), "-o", out, "--quiet"], check=True)
        with open(os.path.join(out, "findings.json")) as f:
            pat = [p for p in json.load(f)["patterns"] if p["id"] == "gpu-oom-cascade"][0]
        c = pat["cascade"] or {}
        return [o["pod"] for o in c.get("failure_order") or []]

    check("deaths exactly max_gap_s apart, then one second more",
          oom_bundle("deaths", [("vllm-a", 0), ("vllm-b", 1800), ("vllm-c", 3601)]), ["vllm-a", "vllm-b"])
    check("three deaths each exactly max_gap_s apart",
          oom_bundle("deaths3", [("vllm-a", 0), ("vllm-b", 1800), ("vllm-c", 3600)]),
          ["vllm-a", "vllm-b", "vllm-c"])
    check("the same deaths listed in another order",
          oom_bundle("deaths2", [("vllm-c", 3601), ("vllm-b", 1800), ("vllm-a", 0)]), ["vllm-a", "vllm-b"])
finally:
    shutil.rmtree(tmp)
print("edges: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
