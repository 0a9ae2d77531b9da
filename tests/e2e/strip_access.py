#!/usr/bin/env python3
"""strip_access.py IN.tar.gz OUT.tar.gz [MODES]: a copy of a generated bundle
(fixtures/gen/make_bundle.py) without the serving pods' access-log lines
('INFO:     ip:port - "POST /v1/... HTTP/1.1" 200 OK'); MODES (comma-separated):
"ids" drops vLLM's 'Received request <id>' and 'Added request <id>' lines too, "noevents" the
Kubernetes events list; nested node archives and gzip-rotated logs included,
so that clock skew must be estimated from the other bases (request ids;
kubelet events; worker deaths against the LB's failures) or from none.
Used by tests/e2e/parsers.sh."""
import gzip
import io
import sys
import tarfile


MODES = sys.argv[3].split(",") if len(sys.argv) > 3 else []
IDS = "ids" in MODES
NOEVENTS = "noevents" in MODES


def strip(data):
    return b"\n".join(l for l in data.split(b"\n") if not (b'HTTP/1.1" 2' in l and b"INFO:  " in l)
                      and not (IDS and (b"] Received request " in l or b"] Added request " in l)))


def member(name, data):
    if "var/log/pods/" not in name:
        return data
    if name.endswith(".gz"):
        return gzip.compress(strip(gzip.decompress(data)), mtime=0)
    return strip(data)


def copy(src, dst):
    for m in src.getmembers():
        if NOEVENTS and m.name.endswith("events.json"):
            continue
        f = src.extractfile(m) if m.isfile() else None
        data = f.read() if f else None
        if data is not None and m.name.endswith(".tar.gz"):
            buf = io.BytesIO()
            with tarfile.open(fileobj=io.BytesIO(data)) as inner, tarfile.open(fileobj=buf, mode="w:gz") as out:
                copy(inner, out)
            data = buf.getvalue()
        elif data is not None:
            data = member(m.name, data)
        if data is not None:
            m.size = len(data)
        dst.addfile(m, io.BytesIO(data) if data is not None else None)


with tarfile.open(sys.argv[1]) as src, tarfile.open(sys.argv[2], "w:gz") as dst:
    copy(src, dst)
