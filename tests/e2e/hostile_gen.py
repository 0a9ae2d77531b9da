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
    open(f"{d}/packs/bad-regex.json", "w").write(json.dumps(pack("bad", [sig("b", ["ok", "broken (unclosed"])]), indent=1))
    open(f"{d}/aaa.log", "w").write("a" * 30000 + "!\n" + "x" * 5000 + "\n" + "word " * 5000 + "!\n" + OOM + "\n")


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


CASES = {k[5:]: v for k, v in globals().items() if k.startswith("case_")}

if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for c in sys.argv[2:] or CASES:
        CASES[c](out)
