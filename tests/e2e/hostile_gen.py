#!/usr/bin/env python3
"""hostile_gen.py DIR CASE...: writes the hostile bundles tests/e2e/hostile.sh
runs inquest on, at test time, standard library only. Every bundle but the
'empty' ones also holds good.log, a container log with a known CUDA OOM line
(OOM below), so a test can check the rest of the bundle was still analyzed.
Deterministic: fixed mtimes, no randomness."""

import gzip
import io
import os
import sys
import tarfile
import zipfile

OOM = ("2026-11-30T14:02:03.000000000Z stderr F torch.cuda.OutOfMemoryError: CUDA out of memory. "
       "Tried to allocate 3.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.66 GiB is free.")
GOOD = ("2026-11-30T14:02:01.000000000Z stdout F INFO: serving\n" + OOM + "\n").encode()
GOOD_NAME = "nodes/n1/var/log/pods/inference_vllm-0_7c1e4a52-3b9d-4f0e-a6d2-9e81c5f03b17/vllm/0.log"
MTIME = 1796047200  # 2026-11-30T15:00:00Z


def tar_add(t, name, data, **kw):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    ti.mtime = MTIME
    for k, v in kw.items():
        setattr(ti, k, v)
    t.addfile(ti, io.BytesIO(data))


def targz(path, members, level=6):
    """members: [(name, bytes)] -> a .tar.gz at path."""
    with open(path, "wb") as f:
        with gzip.GzipFile(fileobj=f, mode="wb", compresslevel=level, mtime=0) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.GNU_FORMAT) as t:
                for name, data in members:
                    tar_add(t, name, data)


def gz(data, level=6):
    return gzip.compress(data, compresslevel=level, mtime=0)


def case_truncated(d):
    # good member first, then enough incompressible-ish text that the cut
    # falls inside the gzip stream of the second member
    filler = b"".join(b"2026-11-30T14:03:%02d.000000000Z stdout F line %d %s\n" % (i % 60, i, b"%x" % (i * 2654435761))
                      for i in range(200000))
    targz(f"{d}/truncated.tar.gz", [(GOOD_NAME, GOOD), ("nodes/n1/big.log", filler)])
    data = open(f"{d}/truncated.tar.gz", "rb").read()
    open(f"{d}/truncated.tar.gz", "wb").write(data[: len(data) // 2])


def case_gzip_streams(d):
    # the bundle's own gzip stream: a tar cut into two gzip members with
    # junk after the last (as "cat a.gz b.gz" and some uploaders make), and
    # one whose deflate data has a damaged byte past the good member
    filler = b"".join(b"2026-11-30T14:04:%02d.000000000Z stdout F row %d %s\n" % (i % 60, i, b"%x" % (i * 2654435761))
                      for i in range(100000))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as t:
        tar_add(t, GOOD_NAME, GOOD)
        tar_add(t, "nodes/n1/rows.log", filler)
    tar = buf.getvalue()
    cut = 1000 * 512 + 100
    open(f"{d}/members.tar.gz", "wb").write(gz(tar[:cut]) + gz(tar[cut:]) + b"not gzip\n")
    data = bytearray(gz(tar))
    for i in range(len(data) // 2, len(data) // 2 + 64):
        data[i] ^= 0x5a
    open(f"{d}/damaged.tar.gz", "wb").write(bytes(data))


def case_packs(d):
    import json
    os.makedirs(f"{d}/packs", exist_ok=True)

    def pack(id_, sigs, q=None):
        return {"id": id_, "kind": "pattern", "version": "0.1.0",
                "title": {"en": "T", "tr": "T"}, "definition": {"en": "D", "tr": "D"},
                "signals": sigs, "verdicts": [{"verdict": "confirmed", "when": "signal:" + sigs[0]["id"]}],
                **({"questions": [q]} if q else {})}

    def sig(id_, pats, tests=()):
        return {"id": id_, "title": {"en": "S", "tr": "S"}, "patterns": pats, "tests": {"match": list(tests)}}
    json.dump(pack("backtrack", [sig("slow", ["^(a+)+$", "(x+x+)+y", "^(\\w+\\s?)*$"])]),
              open(f"{d}/packs/backtrack.json", "w"), indent=1)
    for name, sql in [("write", "DELETE FROM records"), ("attach", "ATTACH DATABASE 'evil.db' AS evil"),
                      ("pragma", "PRAGMA writable_schema=1"),
                      ("loadext", "SELECT load_extension('./evil.so')")]:
        q = {"id": "q", "question": {"en": "Q?", "tr": "Q?"}, "sql": sql, "answer": {"en": "a", "tr": "a"}}
        json.dump(pack("sql-" + name, [sig("oomx", ["CUDA out of memory"], ["CUDA out of memory"])], q),
                  open(f"{d}/packs/sql-{name}.json", "w"), indent=1)
    sigs = [sig("s%d" % i, ["needle%d (?<v>\\d+) [a-z]{1,%d}" % (i, i % 50 + 1)], ["needle%d 1 a" % i])
            for i in range(5000)]
    json.dump(pack("huge", sigs), open(f"{d}/packs/huge.json", "w"), indent=1)
    targz(f"{d}/needles.tar.gz", [("app/needles.log", b"2026-11-30T14:00:00Z needle4999 7 abc\n"
                                   b"2026-11-30T14:00:01Z needle17 3 q\n2026-11-30T14:00:02Z needle18 x\n"),
                                  (GOOD_NAME, GOOD)])
    open(f"{d}/packs/bad-regex.json", "w").write(json.dumps(pack("bad", [sig("b", ["ok", "broken (unclosed"])]), indent=1))
    open(f"{d}/aaa.log", "w").write("a" * 30000 + "!\n" + "x" * 5000 + "\n" + "word " * 5000 + "!\n" + OOM + "\n")
    # one catastrophic regex, one signal; the line that makes it backtrack
    # is line 2 of app/ab.log (and again at line 4)
    json.dump(pack("limit", [sig("backtrack", ["(a+)+$"])]), open(f"{d}/packs/limit.json", "w"), indent=1)
    ab = ("2026-11-30T14:00:00Z hello\n" + "a" * 5000 + "b\n" + "2026-11-30T14:00:01Z bye\n" + "a" * 5000 + "b\n").encode()
    targz(f"{d}/limit.tar.gz", [("app/ab.log", ab), (GOOD_NAME, GOOD)])
    # SQL that runs more than one statement, the second one writing
    q = {"id": "q", "question": {"en": "Q?", "tr": "Q?"}, "sql": "SELECT 1; DELETE FROM records",
         "answer": {"en": "a", "tr": "a"}}
    json.dump(pack("sql-multi", [sig("oomx", ["CUDA out of memory"], ["CUDA out of memory"])], q),
              open(f"{d}/packs/sql-multi.json", "w"), indent=1)


def case_corrupt_gz_member(d):
    # a .log.gz member whose deflate stream is damaged in the middle, in a
    # plain tar, between two good members
    body = b"".join(b"2026-11-30T14:01:%02d.000000000Z stdout F rotated line %d\n" % (i % 60, i) for i in range(20000))
    z = bytearray(gz(body))
    mid = len(z) // 2
    z[mid:mid + 64] = b"\xff" * 64
    with tarfile.open(f"{d}/corrupt-member.tar", "w", format=tarfile.GNU_FORMAT) as t:
        tar_add(t, "a/first.log", b"2026-11-30T14:00:00Z first member ok\n")
        tar_add(t, "a/rotated.log.1.gz", bytes(z))
        tar_add(t, GOOD_NAME, GOOD)


def case_bad_zip(d):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo(GOOD_NAME, (2026, 11, 30, 15, 0, 0)), GOOD)
        z.writestr(zipfile.ZipInfo("other.log", (2026, 11, 30, 15, 0, 0)), b"plain text line\n" * 100)
    data = bytearray(buf.getvalue())
    cd = data.rfind(b"PK\x01\x02", 0, data.rfind(b"PK\x01\x02"))  # the first central entry
    data[cd:cd + 4] = b"XX\x01\x02"
    data[cd + 20:cd + 28] = b"\xff" * 8  # and garbage sizes
    open(f"{d}/bad-cd.zip", "wb").write(bytes(data))


def case_huge_claim(d):
    # a tar member whose header claims 1 TiB (GNU base-256 size), data
    # ending after a few bytes; the good member comes first
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as t:
        tar_add(t, GOOD_NAME, GOOD)
        tar_add(t, "huge.log", b"2026-11-30T14:00:00Z some bytes of the huge member\n")
    data = bytearray(buf.getvalue())
    hdr = data.find(b"huge.log")
    size = 1 << 40
    field = bytearray(12)
    field[0] = 0x80
    for i in range(11, 0, -1):
        field[i] = size & 0xFF
        size >>= 8
    data[hdr + 124:hdr + 136] = field
    chk = sum(data[hdr:hdr + 148]) + 8 * 32 + sum(data[hdr + 156:hdr + 512])
    data[hdr + 148:hdr + 156] = b"%06o\0 " % chk
    open(f"{d}/huge-claim.tar", "wb").write(bytes(data))
    # and a zip whose entry claims 16 EiB uncompressed in its headers
    zb = io.BytesIO()
    with zipfile.ZipFile(zb, "w", zipfile.ZIP_STORED) as z:
        z.writestr(zipfile.ZipInfo("claims.log", (2026, 11, 30, 15, 0, 0)), b"small\n")
        z.writestr(zipfile.ZipInfo(GOOD_NAME, (2026, 11, 30, 15, 0, 0)), GOOD)
    zd = bytearray(zb.getvalue())
    loc = zd.find(b"PK\x03\x04")
    zd[loc + 22:loc + 26] = b"\xff\xff\xff\xfe"
    cen = zd.find(b"PK\x01\x02")
    zd[cen + 24:cen + 28] = b"\xff\xff\xff\xfe"
    open(f"{d}/huge-claim.zip", "wb").write(bytes(zd))


def case_bomb(d):
    # 256 MiB of one log line repeated: about 1 MiB as gzip -9; then the
    # good member after it
    line = b"2026-11-30T14:00:00.000000000Z stdout F " + b"A" * 215 + b"\n"   # 256 bytes
    with open(f"{d}/bomb.tar.gz", "wb") as f:
        with gzip.GzipFile(fileobj=f, mode="wb", compresslevel=9, mtime=0) as g:
            with tarfile.open(fileobj=g, mode="w", format=tarfile.GNU_FORMAT) as t:
                ti = tarfile.TarInfo("bomb.log")
                ti.size = 256 << 20
                ti.mtime = MTIME

                class Rep(io.RawIOBase):
                    left = ti.size
                    chunk = line * 4096

                    def readable(self):
                        return True

                    def readinto(self, b):
                        n = min(len(b), self.left, len(self.chunk))
                        b[:n] = self.chunk[:n]
                        self.left -= n
                        return n
                t.addfile(ti, io.BufferedReader(Rep(), 1 << 20))
                tar_add(t, GOOD_NAME, GOOD)


def case_names(d):
    names = [
        "../../../../tmp/inquest-hostile-escape.log",
        "/tmp/inquest-hostile-abs.log",
        "new\nline.log",
        "esc\x1b]0;pwned\x07\x1b[31mred.log",
        "cr\rreturn.log",
    ]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for n in names:
            tar_add(t, n, b"2026-11-30T14:00:00Z hello from a hostile name\n")
        # a member that is warned about, so its name reaches stderr
        ti = tarfile.TarInfo("link\x1b[2J\n.log")
        ti.type = tarfile.SYMTYPE
        ti.linkname = "../../x\x1b]2;t\x07"
        ti.mtime = MTIME
        t.addfile(ti)
        tar_add(t, GOOD_NAME, GOOD)
    open(f"{d}/names.tar", "wb").write(buf.getvalue())
    # zip can carry a NUL in a name
    zb = io.BytesIO()
    with zipfile.ZipFile(zb, "w") as z:
        z.writestr(zipfile.ZipInfo("nul\0name\x1b[2J.log", (2026, 11, 30, 15, 0, 0)), b"2026-11-30T14:00:00Z nul name\n")
        z.writestr(zipfile.ZipInfo(GOOD_NAME, (2026, 11, 30, 15, 0, 0)), GOOD)
    open(f"{d}/names.zip", "wb").write(zb.getvalue())


def case_links(d):
    with tarfile.open(f"{d}/links.tar", "w", format=tarfile.GNU_FORMAT) as t:
        for name, kind, target in [("sym-passwd.log", tarfile.SYMTYPE, "/etc/passwd"),
                                   ("sym-up.log", tarfile.SYMTYPE, "../../../../etc/passwd"),
                                   ("hard-passwd.log", tarfile.LNKTYPE, "/etc/passwd"),
                                   ("hard-up.log", tarfile.LNKTYPE, "../../etc/passwd")]:
            ti = tarfile.TarInfo(name)
            ti.type = kind
            ti.linkname = target
            ti.mtime = MTIME
            t.addfile(ti)
        tar_add(t, GOOD_NAME, GOOD)
        ti = tarfile.TarInfo("hard-good.log")
        ti.type = tarfile.LNKTYPE
        ti.linkname = GOOD_NAME
        ti.mtime = MTIME
        t.addfile(ti)


def case_text(d):
    rnd = bytes((i * 7919 + 13) % 256 for i in range(65536))
    members = [
        ("bin/blob.bin", b"\x7fELF\x02\x01\x01\0" + rnd),
        ("text/nul.log", b"2026-11-30T14:00:00Z before\n2026-11-30T14:00:01Z has\0a\0nul\n" + OOM.split(" ", 3)[3].encode() + b"\n"),
        ("text/utf8.log", b"2026-11-30T14:00:00Z bad \xff\xfe utf8 \xc3\x28 \xed\xa0\x80 \xf8\x88\x80\x80\x80\n"),
        ("text/crlf.log", b"2026-11-30T14:00:00Z one\r\n2026-11-30T14:00:01Z two\r\n"),
        (GOOD_NAME, GOOD.replace(b"\n", b"\r\n")),
    ]
    targz(f"{d}/text.tar.gz", members)


def case_long_line(d):
    # one 100 MiB line, then the OOM line (line 2)
    with open(f"{d}/longline.tar.gz", "wb") as f:
        with gzip.GzipFile(fileobj=f, mode="wb", compresslevel=1, mtime=0) as g:
            with tarfile.open(fileobj=g, mode="w", format=tarfile.GNU_FORMAT) as t:
                body = b"x" * (100 << 20) + b"\n" + OOM.split(" ", 3)[3].encode() + b"\n"
                tar_add(t, "app/long.log", body)
                tar_add(t, GOOD_NAME, GOOD)


def case_empty_lines(d):
    body = b"\n" * 10_000_000 + OOM.split(" ", 3)[3].encode() + b"\n"
    targz(f"{d}/emptylines.tar.gz", [("app/empty-lines.log", body), (GOOD_NAME, GOOD)], level=1)


def case_many_files(d):
    members = [("many/f%05d.log" % i, b"2026-11-30T14:00:00Z tiny file %d\n" % i) for i in range(50000)]
    members.append((GOOD_NAME, GOOD))
    targz(f"{d}/many.tar.gz", members, level=1)


def case_empty(d):
    targz(f"{d}/empty.tar.gz", [])
    os.makedirs(f"{d}/emptydir", exist_ok=True)


def case_unreadable(d):
    base = f"{d}/dirbundle"
    os.makedirs(f"{base}/{os.path.dirname(GOOD_NAME)}", exist_ok=True)
    open(f"{base}/{GOOD_NAME}", "wb").write(GOOD)
    open(f"{base}/secret.log", "wb").write(b"2026-11-30T14:00:00Z cannot read me\n")
    os.chmod(f"{base}/secret.log", 0)


def docker(t, msg, stream="stderr"):
    import json
    return (json.dumps({"log": msg + "\n", "stream": stream, "time": t}) + "\n").encode()


def case_json(d):
    good = docker("2026-11-30T14:02:01.000000000Z", "serving") + b'{"log":"broken\n' + \
        b"not json at all\n" + b'{"log": 12, "stream": [], "time": {}}\n' + b"{}\n" + \
        docker("2026-11-30T14:02:03.000000000Z", OOM.split(" ", 3)[3])
    deep = b'{"log":"x","stream":"stdout","time":"2026-11-30T14:00:00Z","a":' + b"[" * 10000 + b"]" * 10000 + b"}\n"
    deepobj = b'{"kind":"EventList","apiVersion":"v1","items":' + b'[{"a":' * 10000 + b"1" + b"}]" * 10000 + b"}\n"
    times = b"".join(docker(t, "time " + t) for t in [
        "1970-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "2262-04-11T23:47:16.854775807Z",
        "2262-04-11T23:47:16.854775808Z", "2262-12-31T00:00:00Z", "9999-12-31T23:59:59Z",
        "0000-01-01T00:00:00Z", "-0001-01-01T00:00:00Z", "2026-13-45T99:99:99Z",
        "2026-11-30T14:00:00+99:99", "99999999999999999999-01-01T00:00:00Z"])
    kern = (b"[99999999999999.000000] huge uptime\n[-1.000000] negative\n"
            b"Dec 31 23:59:60 gpu-node-1 kernel: leap\n"
            b"1970-01-01T00:00:00,000000+00:00 gpu-node-1 kernel: epoch\n")
    pre = "nodes/n1/var/log/pods/inference_vllm-1_a83f0d6c-91e2-4b7a-8c45-2f6d0e9b1a38/vllm/"
    targz(f"{d}/json.tar.gz", [
        ("containers/vllm-1-json.log", good),
        ("containers/deep-json.log", docker("2026-11-30T14:00:00Z", "first") + deep),
        ("cluster/events.json", deepobj),
        ("containers/times-json.log", times),
        ("nodes/n1/var/log/kern.log", kern),
        (pre + "1.log", b"".join(("%s stderr F time %s\n" % (t, t)).encode() for t in
                                  ["1970-01-01T00:00:00Z", "2262-04-12T00:00:00Z", "0001-01-01T00:00:00Z",
                                   "9999-12-31T23:59:59.999999999Z"])),
        (GOOD_NAME, GOOD),
    ])


# Times at the edges, as (label, UTC broken-down time): the epoch, a second
# before it, the last whole second inquest can hold (int64 ns ends at
# 2262-04-11T23:47:16.854775807Z), and the first day past it.
EDGE_TIMES = [("epoch", (1970, 1, 1, 0, 0, 0)), ("pre-epoch", (1969, 12, 31, 23, 59, 59)),
              ("last", (2262, 4, 11, 23, 47, 16)), ("past", (2262, 4, 12, 0, 0, 0))]
MON = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def epoch_s(t):
    import calendar
    return calendar.timegm(t + (0, 0, 0))


def iso(t, frac=""):
    return "%04d-%02d-%02dT%02d:%02d:%02d%sZ" % (t + (frac,))


def times_members():
    """One member per timestamped format, each with a line at every edge
    time (the label in the text) and one ordinary line; 'unix' formats
    (journald, Prometheus) also get a number past int64 nanoseconds."""
    import json
    m = {}

    def clf(t, ms=False):  # 30/Nov/2026:14:00:00[.000]
        return "%02d/%s/%04d:%02d:%02d:%02d%s" % (t[2], MON[t[1] - 1], t[0], t[3], t[4], t[5], ".000" if ms else "")
    T0 = (2026, 11, 30, 14, 0, 0)
    rows = EDGE_TIMES + [("ordinary", T0)]
    m["lb/alb.log"] = "".join(
        'http %s app/lb/50dc6c495c0c9188 192.168.131.39:2817 10.0.0.1:80 0.0 0.048 0.0 200 200 0 57 '
        '"GET http://x:80/%s HTTP/1.1" "curl" - - arn:aws:elasticloadbalancing:us-east-2:1:targetgroup/t/7 '
        '"Root=1-5" "x" "-" 1 %s "forward" "-" "-"\n' % (iso(t, ".000000"), lab, iso(t, ".000000")) for lab, t in rows)
    m["lb/envoy.log"] = "".join(
        '[%s] "POST /%s HTTP/1.1" 503 UF 1873 91 31 - "-" "curl/8.5.0" "7b3e9c40" "llm.example.com" "10.244.5.2:8000"\n'
        % (iso(t, ".000"), lab) for lab, t in rows)
    m["lb/haproxy.log"] = "".join(
        'May  1 12:00:05 lb1 haproxy[812]: 203.0.113.9:51544 [%s] fe_https~ be_vllm/vllm-1 0/0/1/2/3 502 217 - - SC-- '
        '12/12/0/0/0 0/0 "POST /%s HTTP/1.1"\n' % (clf(t, True), lab) for lab, t in rows)
    m["lb/ingress.log"] = "".join(
        '10.1.10.51 - - [%s +0000] "POST /%s HTTP/1.1" 502 5 "-" "curl" 293 0.001 [serving-vllm-8000] [] '
        '10.244.3.21:8000 0 0.001 502 abc\n' % (clf(t), lab) for lab, t in rows)
    m["lb/traefik.json"] = "".join(json.dumps({
        "ClientHost": "10.9.129.184", "DownstreamStatus": 502, "Duration": 72393, "RequestMethod": "GET",
        "RequestPath": "/" + lab, "RequestProtocol": "HTTP/1.1", "RouterName": "r@k8s", "StartUTC": iso(t),
        "entryPointName": "web", "level": "info", "msg": "", "time": iso(t)}) + "\n" for lab, t in rows)
    m["lb/gcp.json"] = "".join(json.dumps({
        "httpRequest": {"requestMethod": "POST", "requestUrl": "https://x/" + lab, "status": 502,
                        "remoteIp": "203.0.113.9", "latency": "0.001s", "protocol": "HTTP/1.1"},
        "resource": {"type": "http_load_balancer", "labels": {"project_id": "p"}},
        "timestamp": iso(t), "severity": "WARNING"}) + "\n" for lab, t in rows)
    m["cluster/events.json"] = "".join(json.dumps({
        "apiVersion": "v1", "kind": "Event", "count": 1, "reason": "BackOff", "type": "Warning",
        "message": "event " + lab, "firstTimestamp": iso(t), "lastTimestamp": iso(t),
        "involvedObject": {"kind": "Pod", "name": "vllm-0", "namespace": "serving"},
        "metadata": {"name": "e-" + lab, "namespace": "serving", "creationTimestamp": iso(t)}}) + "\n"
        for lab, t in rows)
    m["gpu/smi.csv"] = "timestamp, name, pci.bus_id, memory.total [MiB], memory.used [MiB]\n" + "".join(
        "%04d/%02d/%02d %02d:%02d:%02d.000, NVIDIA H100 80GB HBM3, 00000000:3B:00.0, 81559 MiB, %d MiB\n"
        % (t + (i,)) for i, (lab, t) in enumerate(rows))
    m["nodes/n1/kern.log"] = "".join(
        "%s gpu-node-1 kernel: kernel %s\n" % (iso(t).replace("Z", ",000000+00:00"), lab) for lab, t in rows)
    m["app/plain.log"] = "".join("%s plain %s\n" % (iso(t), lab) for lab, t in rows)
    # epoch microseconds / milliseconds / seconds, and one past int64 ns
    us = [(lab, epoch_s(t) * 10**6) for lab, t in rows] + [("overflow", 9223372036854776)]
    m["nodes/n1/journal.json"] = "".join(json.dumps({
        "__REALTIME_TIMESTAMP": str(v), "PRIORITY": "6", "_HOSTNAME": "gpu-node-1", "SYSLOG_IDENTIFIER": "kubelet",
        "MESSAGE": "journal " + lab}) + "\n" for lab, v in us)
    m["gpu/dcgm.prom"] = "# TYPE DCGM_FI_DEV_FB_USED gauge\n" + "".join(
        'DCGM_FI_DEV_FB_USED{gpu="0",Hostname="gpu-node-1",label="%s"} %d %d\n' % (lab, i, v // 1000)
        for i, (lab, v) in enumerate(us))
    # pretty-printed: a sample per line, so that each is accounted alone
    m["gpu/prom.json"] = json.dumps({"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"__name__": "DCGM_FI_DEV_FB_USED", "gpu": "0", "Hostname": "gpu-node-1"},
         "values": [[v / 10**6, str(i)] for i, (lab, v) in enumerate(us)]}]}}, indent=1) + "\n"
    return [(k, v.encode()) for k, v in m.items()]


def case_times(d):
    # klog has no year: it comes from the member's mtime, here the epoch,
    # and a day past what inquest can hold
    klog = b"I0101 00:00:01.000000    2211 kubelet.go:1] klog first second\n"
    with open(f"{d}/times.tar.gz", "wb") as f:
        with gzip.GzipFile(fileobj=f, mode="wb", mtime=0) as g:
            with tarfile.open(fileobj=g, mode="w", format=tarfile.GNU_FORMAT) as t:
                for name, data in times_members() + [(GOOD_NAME, GOOD)]:
                    tar_add(t, name, data)
                tar_add(t, "nodes/n1/kubelet-epoch.log", klog, mtime=0)
                tar_add(t, "nodes/n1/kubelet-2262.log", klog, mtime=epoch_s((2262, 4, 12, 0, 0, 0)))
                tar_add(t, "nodes/n1/kubelet-far.log", klog, mtime=10**15)


def case_deep(d):
    """A document nested 10,000 levels in each JSON-based format (and in
    YAML), after the keys that make it sniff as that format; where the
    format has several records, a good one follows."""
    import json
    deep = "[" * 10000 + "]" * 10000
    deepobj = '{"a":' * 10000 + "1" + "}" * 10000
    t = "2026-11-30T14:00:00Z"

    def jl(o, key, val):  # o as JSON with "key": val (raw JSON) added at its end
        return json.dumps(o)[:-1] + ', "%s": %s}' % (key, val)
    traefik = {"ClientHost": "10.9.129.184", "DownstreamStatus": 502, "Duration": 1, "RequestMethod": "GET",
               "RequestPath": "/x", "RequestProtocol": "HTTP/1.1", "StartUTC": t, "entryPointName": "web",
               "level": "info", "msg": "", "time": t}
    gcp = {"httpRequest": {"requestMethod": "POST", "requestUrl": "https://x/", "status": 502, "latency": "0.001s"},
           "resource": {"type": "http_load_balancer"}, "timestamp": t}
    journal = {"__REALTIME_TIMESTAMP": "1796047200000000", "PRIORITY": "6", "_HOSTNAME": "gpu-node-1",
               "MESSAGE": "journal"}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "vllm-0", "namespace": "serving",
                                                            "uid": "u1", "creationTimestamp": t},
           "spec": {"nodeName": "gpu-node-1", "containers": [{"name": "vllm", "image": "vllm"}]},
           "status": {"phase": "Running", "podIP": "10.244.3.21"}}
    members = [
        ("lb/traefik-deep.json", jl(traefik, "deep", deep) + "\n" + json.dumps(traefik) + "\n"),
        ("lb/gcp-deep.json", jl(gcp, "deep", deepobj) + "\n" + json.dumps(gcp) + "\n"),
        ("nodes/n1/journal-deep.json", jl(journal, "DEEP", deep) + "\n" + json.dumps(journal) + "\n"),
        ("cluster/pods-deep.json", '{"apiVersion": "v1", "kind": "List", "items": [%s, %s]}\n'
         % (jl(pod, "deep", deepobj), json.dumps(pod))),
        ("manifests/deep.json", jl({"apiVersion": "apps/v1", "kind": "Deployment",
                                     "metadata": {"name": "vllm", "namespace": "serving"}}, "spec", deepobj) + "\n"),
        # flow style 10,000 deep; block style 2,000 (its indentation grows
        # quadratically: 2 MB)
        ("manifests/deep.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: deep\nspec:\n  x: " +
         deep + "\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: flat\n  namespace: serving\n"
         "spec:\n  template:\n    spec:\n      containers:\n      - name: vllm\n"
         "        args: [\"--max-num-seqs\", \"256\"]\n"),
        ("manifests/deep-block.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: deep\nspec:\n" +
         "".join(" " * (i + 1) + "k:\n" for i in range(2000)) + " " * 2001 + "v\n"),
        ("gpu/prom-deep.json", '{"status": "success", "data": {"resultType": "matrix", "result": [' +
         jl({"metric": {"__name__": "DCGM_FI_DEV_FB_USED", "gpu": "0"}, "values": [[1796047200, "1"]]}, "x", deep) +
         ', {"metric": {"__name__": "DCGM_FI_DEV_FB_USED", "gpu": "1"}, "values": [[1796047200, "2"]]}]}}\n'),
    ]
    targz(f"{d}/deep.tar.gz", [(k, v.encode()) for k, v in members] + [(GOOD_NAME, GOOD)])


CASES = {k[5:]: v for k, v in globals().items() if k.startswith("case_")}

if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for c in sys.argv[2:] or CASES:
        CASES[c](out)
