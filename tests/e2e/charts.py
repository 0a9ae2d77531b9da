#!/usr/bin/env python3
"""charts.py BIN: the sample's charts show the incident. The time axis is
zoomed on the outage (a quarter of its length or 3 minutes either side);
GPU memory is one panel per GPU on an axis from where the GPUs run (not
0 %), so the climb to 100 % shows; no two event labels overlap; the 5xx
chart has a series per status, whose counts are the database's; each
Mermaid block has an explicit palette, at most 30 distinct x labels, and
the Gantt chart the SVG's colours. Last line "charts: N passed, N failed"."""
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import xml.dom.minidom

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tally import Tally  # noqa: E402
ROOT = os.path.dirname(os.path.dirname(HERE))
SAMPLE = os.path.join(ROOT, "fixtures", "sample", "sample-bundle.tar.gz")


T = Tally("charts")
check = T.check


def texts(doc):
    out = []
    for t in doc.getElementsByTagName("text"):
        s = "".join(n.data for n in t.childNodes if n.nodeType == n.TEXT_NODE)
        out.append((float(t.getAttribute("x")), float(t.getAttribute("y")), t.getAttribute("font-size"),
                    t.getAttribute("text-anchor"), s))
    return out


def ts(s):
    import datetime
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def main():
    bin_ = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="iq-charts-")
    out = os.path.join(tmp, "o")
    subprocess.run([bin_, "analyze", SAMPLE, "-o", out, "--quiet"], check=True)
    f = json.load(open(os.path.join(out, "findings.json")))
    pat = [p for p in f["patterns"] if p["id"] == "gpu-oom-cascade"][0]
    b, e = ts(pat["phases"]["outage_begins"]["time"]), ts(pat["phases"]["outage_ends"]["time"])
    margin = max(180, (e - b) / 4)
    charts = {n: xml.dom.minidom.parse(os.path.join(out, "charts", n + ".svg"))
              for n in ("gpu-memory", "lb-5xx", "upstreams", "pod-lifetimes")}
    for name, doc in charts.items():
        # the time axis: HH:MM labels under the plot, within the zoomed window
        hm = [s for (_, _, _, anchor, s) in texts(doc) if re.fullmatch(r"\d\d:\d\d", s)]
        day = 24 * 3600
        secs = [int(x[:2]) * 3600 + int(x[3:]) * 60 for x in hm]
        lo, hi = (b - margin) % day, (e + margin) % day
        check(hm and min(secs) >= lo - 60 and max(secs) <= hi + 60, name + ": zoomed on the outage",
              "%s..%s, window %d..%d" % (hm[:1], hm[-1:], lo, hi))
        # event labels (font-size 10) never overlap on a row
        labels = sorted((y, x, s) for (x, y, size, anchor, s) in texts(doc) if size == "10")
        clash = [(a[2], c[2]) for a, c in zip(labels, labels[1:])
                 if a[0] == c[0] and abs(a[1] - c[1]) < 3 * (len(a[2]) + len(c[2])) + 2]
        check(not clash, name + ": event labels do not overlap", clash[:3])
    gpu = charts["gpu-memory"]
    ticks = [float(s) for (x, y, _, anchor, s) in texts(gpu) if anchor == "end" and re.fullmatch(r"\d+", s)]
    check(ticks and min(ticks) >= 50 and max(ticks) == 100, "gpu: the axis runs from where the GPUs run to 100 %",
          sorted(set(ticks)))
    panels = [s for (_, _, _, _, s) in texts(gpu) if s.startswith("GPU 0 on ")]
    check(len([p for p in panels]) >= 6 and len(set(panels)) == 3, "gpu: a panel per GPU (named in it and the legend)", panels)
    check(any("Below" in s for (_, _, _, _, s) in texts(gpu)), "gpu: says what the foot of the axis means")
    lb = charts["lb-5xx"]
    legend = [s for (x, _, _, anchor, s) in texts(lb) if anchor == "start" and x > 700]
    check("502" in legend and "503" in legend, "5xx: a series per status", legend)
    # the bars' heights per status colour sum to the database's counts in the window
    con = sqlite3.connect("file:" + os.path.join(out, "inquest.db") + "?mode=ro", uri=True)
    md = open(os.path.join(out, "postmortem.md"), encoding="utf-8").read()
    block = re.search(r"### Load balancer 5xx responses per minute\n\n```mermaid\n(.*?)```", md, re.S).group(1)
    xs = json.loads(re.search(r"x-axis (\[.*\])", block).group(1))
    bars = [json.loads(m) for m in re.findall(r"bar (\[.*\])", block)]
    t0 = "2026-11-30 " + xs[0] + ":00"
    t1 = "2026-11-30 " + xs[-1] + ":59"
    want = [n for (n,) in con.execute(
        "SELECT count(*) FROM http_requests WHERE status >= 500 AND status < 600 AND ts >= strftime('%s', ?) * 1000000000"
        " AND ts < (strftime('%s', ?) + 1) * 1000000000 GROUP BY CASE WHEN status IN (500, 502, 503, 504) THEN status"
        " ELSE 999 END ORDER BY 1 DESC", (t0, t1))]
    # the Mermaid bars are cumulative (each status and those after it)
    per = [round(sum(bars[k]) - (sum(bars[k + 1]) if k + 1 < len(bars) else 0)) for k in range(len(bars))]
    check(sorted(per, reverse=True) == want, "5xx: the stacked bars are the database's counts per status", (per, want))
    for m in re.findall(r"```mermaid\n(.*?)```", md, re.S):
        first = m.split("\n", 1)[0]
        if "xychart-beta" in m:
            check("plotColorPalette" in first and "#1f77b4" in first, "mermaid: an explicit palette", first)
            x = json.loads(re.search(r"x-axis (\[.*\])", m).group(1))
            check(len(x) <= 30 and len(set(x)) == len(x), "mermaid: at most 30 distinct x labels", len(x))
        else:
            check("activeTaskBkgColor" in first and "#5aa55a" in first and "compact" in first,
                  "mermaid gantt: the SVG's colours, one row a pod", first)
    subprocess.run(["rm", "-rf", tmp])
    T.done()


if __name__ == "__main__":
    main()
