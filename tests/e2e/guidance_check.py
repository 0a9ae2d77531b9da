#!/usr/bin/env python3
"""guidance_check.py [--devset BIN] FILE|DIR...: no guidance a findings.json
calls for contradicts an answer of the same findings.

Each pattern of each findings.json must list the guidance its findings
call for ("guidance": [{id, phase, when, why, holds}], docs/findings.md),
and no listed item may stand against the facts that
tests/e2e/guidance_contradictions.json says would make it wrong (written
from the items' texts, not from their "when"). Every guidance item of the
shipped packs must have an entry there. With --devset BIN, also analyzes
each bundle of ../shared/devset (when it is there; skipped otherwise) with
BIN and checks its findings. Last line "guidance: N passed, N failed"."""
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TABLE = json.load(open(os.path.join(HERE, "guidance_contradictions.json"), encoding="utf-8"))["items"]


def fact(pat, f):
    if "data" in f:
        q, _, key = f["data"].partition(".")
        v = next((x for x in pat.get("questions", []) if x.get("id") == q), {}).get("data") or {}
        for k in key.split("."):
            v = v.get(k) if isinstance(v, dict) else None
        return v
    sec = {"signal": "signals", "boundary": "boundaries", "condition": "conditions"}
    for kind, name in sec.items():
        if kind in f:
            x = next((x for x in pat.get(name, []) if x.get("id") == f[kind]), None)
            return x.get("present") if x else None
    raise SystemExit("bad fact %r" % f)


def check(path, doc, errors):
    for pat in doc.get("patterns", []):
        gl = pat.get("guidance")
        if gl is None:
            errors.append("%s: %s lists no guidance" % (path, pat.get("id")))
            continue
        for g in gl:
            if not g.get("why") or not isinstance(g.get("holds"), list) or not g["holds"]:
                errors.append("%s: %s/%s: no reason (why, holds)" % (path, pat["id"], g.get("id")))
            for t in TABLE:
                if t["pattern"] != pat["id"] or t["guidance"] != g["id"]:
                    continue
                for conj in t["contradicted_when"]:
                    if all(fact(pat, f) == f["is"] for f in conj):
                        errors.append("%s: %s/%s is called for (%s) but %s" % (
                            path, pat["id"], g["id"], g.get("why"), t["why"]))


def main():
    args = sys.argv[1:]
    devset_bin = None
    if args and args[0] == "--devset":
        devset_bin, args = args[1], args[2:]
    # every shipped guidance item is in the table
    known = {(t["pattern"], t["guidance"]) for t in TABLE}
    good = bad = 0
    missing = []
    for f in sorted(glob.glob(os.path.join(ROOT, "rules", "*.json"))):
        pack = json.load(open(f, encoding="utf-8"))
        for g in pack.get("guidance", []) if isinstance(pack, dict) else []:
            if (pack.get("id"), g.get("id")) not in known:
                missing.append("%s/%s" % (pack.get("id"), g.get("id")))
    if missing:
        print("FAIL: guidance: no contradiction entry for " + ", ".join(missing))
        bad += 1
    files = []
    for a in args:
        files += sorted(glob.glob(os.path.join(a, "*.json"))) if os.path.isdir(a) else [a]
    tmp = None
    devset = os.path.join(ROOT, "..", "shared", "devset")
    if devset_bin:
        if os.path.isdir(devset):
            tmp = tempfile.mkdtemp()
            for b in sorted(os.listdir(devset)):
                if b.endswith(".truth.json") or not os.path.isfile(os.path.join(devset, b)) or b == "score" \
                        or b.endswith(".md"):
                    continue
                out = os.path.join(tmp, b)
                r = subprocess.run([devset_bin, "analyze", os.path.join(devset, b), "-o", out, "--quiet"],
                                   capture_output=True)
                if r.returncode != 0:
                    print("FAIL: guidance: analyze %s: exit %d" % (b, r.returncode))
                    bad += 1
                    continue
                files.append(os.path.join(out, "findings.json"))
            print("  guidance: %d devset bundles analyzed" % len([f for f in files if f.startswith(tmp)]))
        else:
            print("  guidance: devset checks skipped (no ../shared/devset)")
    for f in files:
        errors = []
        check(f, json.load(open(f, encoding="utf-8")), errors)
        for e in errors[:5]:
            print("FAIL: guidance: " + e)
        if errors:
            bad += 1
        else:
            good += 1
    if tmp:
        subprocess.run(["rm", "-rf", tmp])
    print("guidance: %d passed, %d failed" % (good, bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
