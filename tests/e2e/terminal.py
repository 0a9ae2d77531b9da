#!/usr/bin/env python3
"""terminal.py BIN: what inquest does on a terminal and not on a pipe,
run under a pseudo-terminal (Python's pty module, as a terminal would be).
The progress line of analyze and ingest is drawn on stderr, redrawn in
place with carriage returns, shows the bytes read of the bundle's size, the
files, the records and the time, ends with the bundle's totals and is wiped
before anything else is printed; piped, or with --quiet, it is never drawn.
query's table has its columns aligned on a terminal, tab-separated on a
pipe."""
import os
import pty
import re
import subprocess
import sys
import tempfile

BIN = os.path.abspath(sys.argv[1])
SAMPLE = os.path.abspath("fixtures/sample/sample-bundle.tar.gz")
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: " + what)


def on_pty(args, stream="stderr"):
    """Runs BIN args with stderr (or stdout) on a pseudo-terminal; (exit,
    what it wrote there)."""
    master, slave = pty.openpty()
    where = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    where[stream] = slave
    p = subprocess.Popen([BIN] + args, stdin=subprocess.DEVNULL, **where)
    os.close(slave)
    out = b""
    while True:
        try:
            d = os.read(master, 65536)
        except OSError:  # EIO once the child has closed its side
            break
        if not d:
            break
        out += d
    os.close(master)
    return p.wait(), out


LINE = re.compile(rb"\rinquest: ([0-9.]+ (?:B|KiB|MiB)) of ([0-9.]+ (?:B|KiB|MiB)) \((\d+)%\), (\d+) files, (\d+) records, \d+ s")
SUMMARY = re.compile(rb"inquest: (\d+) files read \(0 already in the database\), (\d+) records")

with tempfile.TemporaryDirectory() as tmp:
    size = os.path.getsize(SAMPLE)
    rc, err = on_pty(["analyze", SAMPLE, "-o", os.path.join(tmp, "a")])
    check(rc == 0, "analyze on a terminal: exit %d" % rc)
    lines = LINE.findall(err)
    check(len(lines) >= 1, "no progress line on the terminal: %r" % err[:300])
    summary = SUMMARY.search(err)
    check(summary is not None, "no summary after the progress: %r" % err[-300:])
    if lines and summary:
        last = lines[-1]
        # the last draw is the bundle read whole: its size, every file and record
        check(last[0] == last[1] and last[2] == b"100", "last progress line is not the whole bundle: %r" % (last,))
        check((last[3], last[4]) == summary.groups(), "progress says %s files, %s records; the summary %s, %s"
              % (last[3], last[4], summary.group(1), summary.group(2)))
        kib = "%.1f KiB" % (size / 1024)
        check(last[1].decode() == kib, "the bundle's size %r, expected %s" % (last[1], kib))
        before = err[:summary.start()]
        # redrawn in place: no line end among the draws, and wiped with spaces before the summary
        check(b"\n" not in before, "a line end among the progress draws: %r" % before[:300])
        check(re.search(rb"\r +\r$", before) is not None, "the progress line is not wiped before the summary: %r" % before[-120:])
    check(b"\x1b" not in err, "terminal escapes in the progress: %r" % err[:200])
    # --quiet: nothing at all on a whole bundle
    rc, err = on_pty(["analyze", SAMPLE, "-o", os.path.join(tmp, "q"), "--quiet"])
    check(rc == 0 and err == b"", "analyze --quiet on a terminal: exit %d, %r" % (rc, err[:200]))
    # ingest draws it too
    rc, err = on_pty(["ingest", SAMPLE, "--db", os.path.join(tmp, "i.db")])
    check(rc == 0 and len(LINE.findall(err)) >= 1, "ingest on a terminal: exit %d, %r" % (rc, err[:200]))
    # piped: never
    r = subprocess.run([BIN, "analyze", SAMPLE, "-o", os.path.join(tmp, "p")], capture_output=True)
    check(r.returncode == 0 and b"\r" not in r.stderr and b"records, 0 s" not in r.stderr
          and r.stderr.count(b"\n") == 1 and SUMMARY.search(r.stderr) is not None,
          "piped analyze: exit %d, stderr %r" % (r.returncode, r.stderr[:300]))

    # query: aligned on a terminal (numbers to the right), tabs on a pipe
    db = os.path.join(tmp, "a", "inquest.db")
    sql = "SELECT format, count(*) AS files FROM files WHERE format IN ('cri', 'kernel') GROUP BY format ORDER BY format"
    rc, out = on_pty(["query", "--db", db, sql], "stdout")
    want = b"format  files\r\n------  -----\r\ncri        17\r\nkernel      3\r\n"
    check(rc == 0 and out == want, "query on a terminal: exit %d, %r, expected %r" % (rc, out, want))
    r = subprocess.run([BIN, "query", "--db", db, sql], capture_output=True)
    check(r.returncode == 0 and r.stdout == b"format\tfiles\ncri\t17\nkernel\t3\n", "query piped: %r" % r.stdout)

print("terminal: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
