#!/usr/bin/env python3
"""memory.py BIN SMALL.tar.gz LARGE.tar.gz: peak RSS of `inquest analyze` on a
small and a large bundle (make bench-memory: about 100 MB and 2 GB
uncompressed). Memory is bounded when the large bundle's peak is within 10%
of the small one's (and under 256 MiB). Exit 1 when it is not."""
import os
import shutil
import subprocess
import sys
import tempfile

TIME_BIN = "/usr/bin/time"


def peak(bin_, bundle, work):
    out = os.path.join(work, "out")
    shutil.rmtree(out, ignore_errors=True)
    with tempfile.NamedTemporaryFile(mode="r") as tf:
        r = subprocess.run([TIME_BIN, "-f", "%e %M", "-o", tf.name, bin_, "analyze", bundle, "-o", out,
                            "--quiet"], capture_output=True, text=True,
                           env=dict(os.environ, TZ="UTC", LC_ALL="C"))
        if r.returncode != 0:
            sys.exit("memory: analyze %s failed: %s" % (bundle, r.stderr[-1000:]))
        wall, rss = tf.read().split()
    size = sum(os.path.getsize(os.path.join(out, f)) for f in ("inquest.db",))
    shutil.rmtree(out, ignore_errors=True)
    return float(wall), int(rss) / 1024, size


def main():
    bin_, small, large = sys.argv[1:4]
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR", ".")) as work:
        ws, rs, ds = peak(bin_, small, work)
        wl, rl, dl = peak(bin_, large, work)
    print("memory: %s: %.1f s, peak RSS %.1f MiB, inquest.db %.0f MB" % (small, ws, rs, ds / 1e6))
    print("memory: %s: %.1f s, peak RSS %.1f MiB, inquest.db %.0f MB" % (large, wl, rl, dl / 1e6))
    grow = (rl - rs) / rs
    ok = grow <= 0.10 and rl <= 256
    print("memory: large/small peak RSS %+.1f%% (target within 10%%, under 256 MiB): %s"
          % (100 * grow, "PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
