#!/usr/bin/env python3
"""show.py BIN: `inquest show REF [-C N]` prints the lines the postmortem
cites. On the sample bundle: every E<n> of the postmortem's evidence table
prints its line (marked '>') as the bundle holds it, read here with
Python's own tarfile and gzip through the nested archive and the rotated
.gz member; PATH:LINE does the same; -C N gives N lines either side; from
another folder (the bundle not found) the lines come from the database,
as the records hold them; bad references are usage errors. Last line
"show: N passed, N failed"."""
import gzip
import io
import os
import re
import sqlite3
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mdtext  # noqa: E402
from tally import Tally  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.abspath(sys.argv[1])
SAMPLE = os.path.join(ROOT, "fixtures", "sample", "sample-bundle.tar.gz")


T = Tally("show")
check = T.check


def lines_of(path):
    """The lines of a file of the sample bundle ('a/b.tar.gz!c/d.log'), as bytes."""
    data = open(SAMPLE, "rb").read()
    for part in path.split("!"):
        t = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")
        data = t.extractfile(t.getmember(part)).read()
    if path.endswith(".gz") and not path.endswith(".tar.gz"):
        data = gzip.decompress(data)
    return data.split(b"\n")


def show(*args, cwd=ROOT):
    return subprocess.run([BIN, "show"] + list(args), capture_output=True, cwd=cwd)


def main():
    tmp = tempfile.mkdtemp(prefix="iq-show-")
    out = os.path.join(tmp, "out")
    subprocess.run([BIN, "analyze", SAMPLE, "-o", out, "--quiet"], check=True)
    db = os.path.join(out, "inquest.db")
    rows = {}
    for l in mdtext.text_of(os.path.join(out, "postmortem.md")).lines:
        m = re.match(r"E(\d+) \| `(.+)` \| (\d+)(?:–(\d+))? \|", l)
        if m:
            rows[int(m.group(1))] = (m.group(2), int(m.group(3)), int(m.group(4) or m.group(3)))
    check(len(rows) > 30, "the evidence table has rows", str(len(rows)))
    bad = []
    for n, (path, line, last) in sorted(rows.items()):
        r = show("E%d" % n, "--db", db, "-C", "0")
        text = r.stdout.decode("utf-8", "replace").split("\n")
        want = lines_of(path)
        cited = [l for l in text if l.startswith(">")]
        exp = [">%7d  %s" % (k, want[k - 1].decode("utf-8", "replace")[:1000]) for k in range(line, last + 1)]
        head = text[0] if text else ""
        if r.returncode != 0 or "(from the bundle)" not in head or not head.startswith(
                "sample-bundle.tar.gz!%s:%d" % (path, line)) or [c.rstrip(" …") for c in cited] != \
                [e.rstrip() for e in exp]:
            bad.append("E%d %s:%d: %r" % (n, path, line, text[:3]))
    check(not bad, "every E<n> prints its line from the bundle (%d refs)" % len(rows), "; ".join(bad[:3]))

    # PATH:LINE, through the nested node archive, with context
    nested = next(((p, l) for p, l, _ in rows.values() if ".tar.gz!" in p), None)
    check(nested is not None, "a reference inside the nested archive")
    if nested:
        p, l = nested
        r = show("%s:%d" % (p, l), "--db", db, "-C", "2")
        text = r.stdout.decode().split("\n")[1:-1]
        want = lines_of(p)
        exp = [("%s%7d  %s" % (">" if k == l else " ", k, want[k - 1].decode()[:1000])).rstrip()
               for k in range(max(1, l - 2), min(len(want), l + 2) + 1)]
        check(r.returncode == 0 and [t.rstrip(" …") for t in text] == exp, "PATH:LINE -C 2 in a nested archive",
              repr(text[:2]) + " vs " + repr(exp[:2]))
    # a rotated .gz member
    gz = next(((p, l) for p, l, _ in rows.values() if p.endswith(".gz") and not p.endswith(".tar.gz")), None)
    check(gz is not None, "a reference inside a .gz member")
    if gz:
        r = show("%s:%d" % gz, "--db", db, "-C", "0")
        want = lines_of(gz[0])[gz[1] - 1].decode()
        check(r.returncode == 0 and (">%7d  %s" % (gz[1], want))[:200] in r.stdout.decode(), "a .gz member's line")

    # the bundle gone: the database's records
    copy = os.path.join(tmp, "sample-bundle.tar.gz")
    open(copy, "wb").write(open(SAMPLE, "rb").read())
    subprocess.run([BIN, "analyze", copy, "-o", out, "--quiet"], check=True)
    os.unlink(copy)
    con = sqlite3.connect("file:" + db + "?mode=ro", uri=True)
    p, l, _ = rows[1]
    rec = con.execute("SELECT r.text FROM records r JOIN files f ON f.id = r.file_id WHERE f.path = ? AND r.line = ?",
                      ("sample-bundle.tar.gz!" + p, l)).fetchone()[0]
    r = show("E1", "--db", db, "-C", "1", cwd=tmp)
    text = r.stdout.decode().split("\n")
    check(r.returncode == 0 and "from the database" in text[0] and
          (">%7d  %s" % (l, rec.split("\n")[0]))[:300] in r.stdout.decode(), "from the database when the bundle is gone",
          repr(text[:2]))
    # errors
    check(show("E0", "--db", db).returncode == 2, "E0 is a usage error")
    check(show("E%d" % (len(rows) + 1), "--db", db).returncode == 2, "a number past the table is a usage error")
    check(show("nothing", "--db", db).returncode == 2, "a REF without a line is a usage error")
    check(show("no/such/file.log:3", "--db", db).returncode == 3, "a file not in the database")
    check(show("E1", "--db", os.path.join(tmp, "none.db")).returncode == 3, "no database")
    check(show("E1", "--db", db, "-C", "x").returncode == 2, "-C takes a number")
    subprocess.run(["rm", "-rf", tmp])
    T.done()


if __name__ == "__main__":
    main()
