#!/usr/bin/env python3
"""verbatim.py: evidence proves itself at the parser level. For every record
a parser-table fixture (fixtures/lines/<format>/<case>.json, what `inquest
parse` prints) holds, what evidence would quote stands verbatim in the .log
beside it: each quote's text at its line, or, for a record without one, the
first line of its text (up to 48 characters; JSON-escaped where the file
holds it escaped, as json-file logs do) within the lines the record spans.
A record whose text is a restatement must carry a quote."""
import glob
import json
import re
import sys

# `inquest parse` prints a byte that is not UTF-8 as \xNN; the file read
# with errors="replace" holds U+FFFD there
BAD_BYTE = re.compile(r"\\x[0-9a-f]{2}")


def forms(key):
    return {key, json.dumps(key)[1:-1], json.dumps(key, ensure_ascii=False)[1:-1], key.replace('"', '\\"')}


def main():
    checked = bad = 0
    for js in sorted(glob.glob("fixtures/lines/*/*.json")):
        log = js[:-5] + ".log"
        try:
            lines = open(log, "rb").read().decode("utf-8", "replace").split("\n")
        except FileNotFoundError:
            continue
        for row in open(js, encoding="utf-8"):
            try:
                r = json.loads(row)
            except ValueError:
                continue
            if "line" not in r or "kind" not in r:
                continue
            checked += 1
            quotes = r.get("quotes")
            if quotes:
                miss = [q for q in quotes if not (0 < q["line"] <= len(lines) and
                                                   BAD_BYTE.sub("\ufffd", q["text"]) in lines[q["line"] - 1])]
                if miss:
                    bad += 1
                    print("FAIL: %s: a quote is not at its line: %s" % (js, miss[0]))
                continue
            text = BAD_BYTE.sub("\ufffd", (r.get("text") or "").split("\n")[0]).strip()[:48]
            i = r["line"] - 1
            span = "\n".join(lines[i:i + max(1, r.get("nlines", 1))])
            if text and not any(f in span for f in forms(text)):
                bad += 1
                print("FAIL: %s:%d: %s record text is not at its line and it has no quote: %r"
                      % (log, r["line"], r["kind"], text))
    print("verbatim: %d passed, %d failed" % (checked - bad, bad))
    return 1 if bad else 0


sys.exit(main())
