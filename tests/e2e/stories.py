#!/usr/bin/env python3
"""stories.py BIN [--devset]: the postmortem tells the pattern the findings
confirm, in that pattern's words. For a generated bundle of each scenario
(fixtures/gen/make_bundle.py): the title, the root cause, the sections
and the action items of the pattern its verdicts say happened, and nothing
of the GPU OOM cascade's words in a report of another pattern; a bundle
where no pattern holds says so and what was checked. With --devset (and
../shared/devset there), every devset bundle: its title names the pattern
its verdicts confirm. Last line "stories: N passed, N failed"."""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tally import Tally  # noqa: E402
ROOT = os.path.dirname(os.path.dirname(HERE))
GEN = os.path.join(ROOT, "fixtures", "gen", "make_bundle.py")
BIN = os.path.abspath(sys.argv[1])

# words only a GPU OOM report says
GPU_WORDS = ["CUDA out-of-memory error killed", "Failure order", "Memory limits measured",
             "paged attention", "--max-num-seqs", "CUDA out-of-memory events", "surviving workers",
             "GPU memory headroom", "every CUDA out-of-memory line", "each pod's first CUDA OOM"]

# the title a verdict set gives (docs/findings.md: which pattern the postmortem is about)
TITLES = {"gpu-oom-cascade/confirmed": "GPU OOM cascading failure",
          "gpu-oom-cascade/oom_no_cascade": "GPU out-of-memory crash",
          "gpu-oom-cascade/ruled_out_flood": "Ingress flood",
          "host-memory-oom/confirmed": "Host memory OOM kill",
          "gpu-oom-cascade/ruled_out_host_oom": "Host memory OOM kill",
          "gpu-hardware-fault/confirmed": "GPU hardware or driver fault"}
ORDER = ["gpu-oom-cascade/confirmed", "gpu-oom-cascade/oom_no_cascade", "gpu-oom-cascade/ruled_out_flood",
         "host-memory-oom/confirmed", "gpu-oom-cascade/ruled_out_host_oom", "gpu-hardware-fault/confirmed"]


T = Tally("stories")
check = T.check


def expected_title(findings):
    held = {"%s/%s" % (p["id"], p["verdict"]) for p in findings["patterns"]}
    for k in ORDER:
        if k in held:
            return TITLES[k]
    return "no known incident pattern found"


def analyze(bundle, out, *extra):
    subprocess.run([BIN, "analyze", bundle, "-o", out, "--quiet"] + list(extra), check=True,
                   stdout=subprocess.DEVNULL)
    return (open(os.path.join(out, "postmortem.md"), encoding="utf-8").read(),
            json.load(open(os.path.join(out, "findings.json"), encoding="utf-8")))


def body(md):
    return md.split("\n## Coverage\n")[0]


def section(md, head):
    m = re.search(r"\n## %s\n(.*?)(?=\n## )" % re.escape(head), md, re.S)
    return m.group(1) if m else None


CASES = {
    "cascade": {"title": "GPU OOM cascading failure", "root": "GPU memory ran out: the first CUDA out-of-memory error",
                "sections": ["Failure order", "Memory limits measured in the bundle"], "gpu": True,
                "actions": ["lower-context-and-batch"]},
    "single-oom": {"title": "GPU out-of-memory crash", "root": "GPU memory ran out", "gpu": True,
                   "summary": "The failure did not spread to the other pods."},
    "host-oom": {"title": "Host memory OOM kill", "root": "Host memory ran out",
                 "summary": "No CUDA out-of-memory error was logged", "actions": ["raise-memory-limits", "find-the-growth"],
                 "not": ["**`cuda-oom`**", "ruled out", "(`gpu-oom-cascade`): `ruled_out_host_oom`"],
                 "tr": "# Olay Sonrası İnceleme: Host belleği OOM ile sonlandırma"},
    "flood": {"title": "Ingress flood", "root": "An ingress flood: the clients that flooded it were",
              "actions": ["block-flood-clients", "per-client-quotas"]},
    "xid": {"title": "GPU hardware or driver fault", "root": "A GPU hardware or driver fault: NVRM: Xid",
            "actions": ["drain-faulty-gpu", "reset-or-replace", "health-checks"]},
    "healthy": {"title": "no known incident pattern found", "checked": True},
}


def scenarios(tmp):
    for name, want in CASES.items():
        bundle = os.path.join(tmp, name + ".tar.gz")
        subprocess.run([sys.executable, GEN, "--scenario", name, "--out", bundle], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        md, f = analyze(bundle, os.path.join(tmp, name))
        first = md.split("\n", 1)[0]
        check(first == "# Postmortem: " + want["title"], name + ": title", first)
        check(expected_title(f) == want["title"], name + ": the verdicts give the title", expected_title(f))
        b = body(md)
        if "root" in want:
            m = re.search(r"^\*\*Root cause:\*\* (.*)$", b, re.M)
            check(m and m.group(1).startswith(want["root"].replace("_", "\\_")), name + ": root cause",
                  m.group(1)[:120] if m else "none")
            check("**Trigger:**" in b, name + ": trigger")
        if "summary" in want:
            check(want["summary"] in (section(md, "Summary") or ""), name + ": summary")
        for s in want.get("sections", []):
            check(s in b, name + ": section " + s)
        if not want.get("gpu"):
            whole = md.split("\n## Appendix")[0]
            for w in GPU_WORDS:
                check(w not in whole, name + ": no GPU OOM words", w)
        acts = section(md, "Action items")
        for a in want.get("actions", []):
            check(acts is not None and ("(`%s`)" % a) in acts, name + ": action item " + a)
        if "actions" in want:
            # exactly the guidance findings.json lists, in the pack's order
            pat = [p for p in f["patterns"] if "guidance" in p and p["guidance"]
                   and all(("(`%s`)" % g["id"]) in (acts or "") for g in p["guidance"])]
            check(len(pat) >= 1, name + ": action items are the guidance findings.json calls for")
        for n in want.get("not", []):
            check(n in (section(md, "What it was not") or ""), name + ": what it was not", n)
        if want.get("checked"):
            chk = section(md, "What was checked") or ""
            check("`gpu-oom-cascade`" in chk and "`host-memory-oom`" in chk and "`cuda-oom`" in chk,
                  name + ": what was checked")
            check("## Action items" not in md and "## Root cause" not in md, name + ": no actions, no root cause")
        if "tr" in want:
            mdtr, _ = analyze(bundle, os.path.join(tmp, name + "-tr"), "--lang", "tr")
            check(mdtr.split("\n", 1)[0] == want["tr"], name + ": Turkish title", mdtr.split("\n", 1)[0])
            check("Kök neden:" in mdtr and "Host belleği tükendi" in mdtr, name + ": Turkish root cause")


def devset(tmp):
    d = os.path.join(ROOT, "..", "shared", "devset")
    if not os.path.isdir(d):
        print("  stories: devset checks skipped (no ../shared/devset)")
        return
    n = 0
    for b in sorted(os.listdir(d)):
        if b.endswith((".truth.json", ".md")) or b == "score" or not os.path.isfile(os.path.join(d, b)):
            continue
        md, f = analyze(os.path.join(d, b), os.path.join(tmp, "devset-" + b))
        want = expected_title(f)
        check(md.split("\n", 1)[0] == "# Postmortem: " + want, "devset " + b + ": title names " + want,
              md.split("\n", 1)[0])
        check(not re.search(r"`[^`]*:\d+`", body(md).split("\n## Evidence\n")[0]),
              "devset " + b + ": short references only")
        n += 1
    print("  stories: %d devset bundles" % n)


def main():
    tmp = tempfile.mkdtemp(prefix="iq-stories-")
    try:
        scenarios(tmp)
        if "--devset" in sys.argv:
            devset(tmp)
    finally:
        subprocess.run(["rm", "-rf", tmp])
    T.done()


if __name__ == "__main__":
    main()
