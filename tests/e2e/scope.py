#!/usr/bin/env python3
"""scope.py BIN: --since/--until/--namespace/--node/--pod on analyze and
ingest. A scoped run keeps exactly the records of an unscoped run that are
in the window (or have no time) and attributed to the scope (or to nothing);
every other record's lines are skipped lines with the scope as the reason,
and every file still has lines_read = lines_parsed + lines_skipped."""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

BIN = sys.argv[1]
SAMPLE = "fixtures/sample/sample-bundle.tar.gz"
SINCE, UNTIL = "2026-11-30T14:10:00Z", "2026-11-30T14:20:00Z"
SINCE_NS, UNTIL_NS = 1796047800 * 10**9, 1796048400 * 10**9
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def analyze(out, *extra):
    r = subprocess.run([BIN, "analyze", SAMPLE, "-o", out, "--quiet"] + list(extra),
                       capture_output=True, text=True)
    check(r.returncode == 0, "analyze %s: exit %d %s" % (extra, r.returncode, r.stderr))
    return sqlite3.connect(os.path.join(out, "inquest.db"))


def one(db, sql, *args):
    return db.execute(sql, args).fetchone()[0]


with tempfile.TemporaryDirectory() as tmp:
    full = analyze(os.path.join(tmp, "full"))
    win = analyze(os.path.join(tmp, "win"), "--since", SINCE, "--until", UNTIL)
    pod = analyze(os.path.join(tmp, "pod"), "--pod", "vllm-1")

    # each file's records are the ids first_record..last_record, and its
    # time span is theirs (files with records only)
    for db_name, db in (("full", full), ("win", win)):
        bad = one(db, "SELECT count(*) FROM files f WHERE records > 0 AND NOT ("
                  " first_record = (SELECT min(id) FROM records r WHERE r.file_id = f.id)"
                  " AND last_record = (SELECT max(id) FROM records r WHERE r.file_id = f.id)"
                  " AND last_record - first_record + 1 = records"
                  " AND first_ts IS (SELECT min(ts) FROM records r WHERE r.file_id = f.id)"
                  " AND last_ts IS (SELECT max(ts) FROM records r WHERE r.file_id = f.id))")
        check(bad == 0, "%s: %d files whose record range or time span is wrong" % (db_name, bad))
        check(one(db, "SELECT count(*) FROM files WHERE records > 0 AND first_ts IS NOT NULL") > 10,
              "%s: files with a time span" % db_name)

    # the window: only records inside it or without a time are kept
    check(one(win, "SELECT count(*) FROM records WHERE ts < ? OR ts > ?",
              SINCE_NS, UNTIL_NS) == 0, "window: a record outside the window was kept")
    want = one(full, "SELECT count(*) FROM records WHERE ts IS NULL OR ts BETWEEN ? AND ?",
               SINCE_NS, UNTIL_NS)
    got = one(win, "SELECT count(*) FROM records")
    check(got == want and got > 1000, "window: %d records kept, want %d" % (got, want))
    check(one(full, "SELECT count(*) FROM records") > want + 1000,
          "window: the sample has records outside the window")
    # per file of one-line records: the skipped lines are exactly those of
    # the records left out
    for path, read in full.execute(
            "SELECT path, lines_read FROM files WHERE format IN ('cri', 'docker-json', 'ingress-nginx',"
            " 'kernel', 'nvidia-smi-csv')"):
        out = one(full, "SELECT coalesce(sum(nlines), 0) FROM records r JOIN files f ON f.id = r.file_id"
                  " WHERE f.path = ? AND (ts < ? OR ts > ?)", path, SINCE_NS, UNTIL_NS)
        skipped = one(win, "SELECT coalesce(sum(lines), 0) FROM skips s JOIN files f ON f.id = s.file_id"
                      " WHERE f.path = ? AND reason = 'outside the scope (--since/--until)'", path)
        check(out == skipped, "window: %s: %d lines skipped, want %d" % (path, skipped, out))
    # http rows follow their records
    check(one(win, "SELECT count(*) FROM http_requests") ==
          one(full, "SELECT count(*) FROM http_requests WHERE ts BETWEEN ? AND ?", SINCE_NS, UNTIL_NS),
          "window: http_requests rows")

    # the pod: records of other pods are left out, records of no pod kept
    check(one(pod, "SELECT count(*) FROM records WHERE pod IS NOT NULL AND pod <> 'vllm-1'") == 0,
          "pod: a record of another pod was kept")
    want = one(full, "SELECT count(*) FROM records WHERE pod IS NULL OR pod = 'vllm-1'")
    got = one(pod, "SELECT count(*) FROM records")
    check(got == want, "pod: %d records kept, want %d" % (got, want))
    check(one(pod, "SELECT count(*) FROM records WHERE kind = 'http'") ==
          one(full, "SELECT count(*) FROM records WHERE kind = 'http'"),
          "pod: load balancer lines (no pod) are kept")
    check(one(pod, "SELECT count(*) FROM pod_states WHERE pod <> 'vllm-1'") == 0,
          "pod: pod_states of other pods")

    for name, db in (("window", win), ("pod", pod)):
        bad = one(db, "SELECT count(*) FROM files WHERE lines_read <> lines_parsed + lines_skipped")
        check(bad == 0, "%s: %d files with read != parsed + skipped" % (name, bad))
        bad = one(db, "SELECT count(*) FROM files f WHERE lines_skipped <>"
                  " (SELECT coalesce(sum(lines), 0) FROM skips s WHERE s.file_id = f.id)")
        check(bad == 0, "%s: %d files whose skips do not add up" % (name, bad))

    # --tz: times written without a zone are in that zone (Istanbul is
    # UTC+3 all year since 2016); times with a zone do not move
    for zone in ("Europe/Istanbul", "+03:00"):
        tz = analyze(os.path.join(tmp, "tz"), "--tz", zone)
        tz.execute("ATTACH ? AS f", (os.path.join(tmp, "full", "inquest.db"),))
        moved = one(tz, "SELECT count(*) FROM records r JOIN f.records o ON o.id = r.id"
                    " WHERE o.ts_how = 'assumed_utc' AND r.ts_how = 'assumed_zone'"
                    " AND r.ts = o.ts - 3 * 3600 * 1000000000")
        want = one(full, "SELECT count(*) FROM records WHERE ts_how = 'assumed_utc'")
        check(want > 100 and moved == want, "--tz %s: %d of %d zone-less records moved by -3 h"
              % (zone, moved, want))
        same = one(tz, "SELECT count(*) FROM records r JOIN f.records o ON o.id = r.id"
                   " WHERE o.ts_how = 'explicit' AND r.ts IS NOT o.ts")
        check(same == 0, "--tz %s: %d records with a zone moved" % (zone, same))
        check(one(tz, "SELECT value FROM meta WHERE key = 'default_zone'") == zone,
              "--tz %s: meta default_zone" % zone)
        tz.close()
        shutil.rmtree(os.path.join(tmp, "tz"))
    check(one(full, "SELECT value FROM meta WHERE key = 'default_zone'") == "UTC",
          "no --tz: meta default_zone is UTC")

    # ingest takes the same options; bad values are usage errors
    db = os.path.join(tmp, "i.db")
    r = subprocess.run([BIN, "ingest", SAMPLE, "--db", db, "--quiet", "--node", "gpu-node-2"],
                       capture_output=True, text=True)
    check(r.returncode == 0, "ingest --node: exit %d" % r.returncode)
    idb = sqlite3.connect(db)
    check(one(idb, "SELECT count(*) FROM records WHERE node IS NOT NULL AND node <> 'gpu-node-2'") == 0,
          "node: a record of another node was kept")
    check(one(idb, "SELECT count(*) FROM records WHERE node = 'gpu-node-2'") ==
          one(full, "SELECT count(*) FROM records WHERE node = 'gpu-node-2'"), "node: its records kept")
    for args, msg in ((["--since", "yesterday"], "takes an RFC 3339 time"),
                      (["--pod"], "--pod needs a value"),
                      (["--tz", "Mars/Base"], "unknown time zone 'Mars/Base'")):
        r = subprocess.run([BIN, "analyze", SAMPLE, "-o", os.path.join(tmp, "x")] + args,
                           capture_output=True, text=True)
        check(r.returncode == 2 and msg in r.stderr, "%s: exit %d, %r" % (args, r.returncode, r.stderr))

print("scope: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
