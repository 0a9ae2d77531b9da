#!/usr/bin/env python3
"""browser.py BIN: postmortem.html in a real browser (Debian's chromium,
headless). On the sample bundle and on the hostile bundle of inert.py: the page as Chromium builds it has the
postmortem's headings and every table row as GitHub renders the Markdown
(cmark-gfm), every [E12] link lands on its row of the evidence table, the
four charts are inline SVG and drawn (their PNG has the palette's colours),
no script ran, no element or attribute could run one, and no request left
the page (Chromium's net log). Skipped, and says so, when chromium is not
installed (`make test-browser` installs it). BROWSER_SHOTS=DIR keeps the
screenshots. Last line "browser: N passed, N failed"."""
import html.parser
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mdtext  # noqa: E402
from tally import Tally  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
SAMPLE = os.path.join(ROOT, "fixtures", "sample", "sample-bundle.tar.gz")
CHROME = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-default-apps",
         "--disable-extensions", "--disable-domain-reliability", "--no-pings", "--hide-scrollbars",
         "--host-resolver-rules=MAP * ~NOTFOUND"]


T = Tally("browser")
check = T.check


def chrome(args, tmp):
    prof = tempfile.mkdtemp(dir=tmp)
    r = subprocess.run([CHROME] + FLAGS + ["--user-data-dir=" + prof] + args, capture_output=True, timeout=120)
    return r


def png_pixels(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB(A) PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and not interlace
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[k:k + 3]) for k in range(0, stride, bpp)])
        prev = line
    return w, h, rows


class Dom(html.parser.HTMLParser):
    """Every element with its attributes, and the document's title."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elems, self.title, self._t = [], "", False

    def handle_starttag(self, tag, attrs):
        self.elems.append((tag, dict(attrs)))
        self._t = tag == "title"

    def handle_endtag(self, tag):
        self._t = False

    def handle_data(self, d):
        if self._t:
            self.title += d


ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "h4", "p", "ul", "li",
                "input", "blockquote", "table", "thead", "tbody", "tr", "th", "td", "code", "pre", "strong",
                "em", "a", "figure", "figcaption",
                # the charts
                "svg", "rect", "line", "polyline", "path", "text", "g"}


def page_checks(name, htmlpath, mdpath, tmp, hostile=False):
    net = os.path.join(tmp, name + ".net.json")
    r = chrome(["--log-net-log=" + net, "--dump-dom", "file://" + htmlpath], tmp)
    dom = r.stdout.decode("utf-8", "replace")
    check(r.returncode == 0 and "</html>" in dom, name + ": chromium rendered the page", r.stderr[-300:])
    d = Dom()
    d.feed(dom)
    # what the reader sees: the same headings and table rows as GitHub shows the Markdown
    want = mdtext.text_of(mdpath).lines
    got_t = mdtext.Text()
    got_t.feed("<body" + dom.split("<body", 1)[-1])
    got_t.flush()
    got = got_t.lines
    rows = lambda ls: [l for l in ls if " | " in l]
    check(rows(got) == rows(want), name + ": every table row reads as GitHub renders it",
          next(((a, b) for a, b in zip(rows(got), rows(want)) if a != b), (len(rows(got)), len(rows(want)))))
    check(got[:1] == want[:1], name + ": the title", (got[:1], want[:1]))
    # evidence links land on their rows
    ids = {a.get("id") for _, a in d.elems if a.get("id")}
    hrefs = [a["href"] for t, a in d.elems if t == "a" and "href" in a]
    check(hrefs and all(h.startswith("#") and h[1:] in ids for h in hrefs), name + ": every link is to an anchor of the page",
          [h for h in hrefs if not h.startswith("#") or h[1:] not in ids][:5])
    # nothing that could run or load anything
    bad = [(t, a) for t, a in d.elems if t not in ALLOWED_TAGS]
    check(not bad, name + ": only the elements a postmortem is made of", bad[:5])
    onattr = [(t, k) for t, a in d.elems for k in a if k.lower().startswith("on")]
    check(not onattr, name + ": no event handler attribute", onattr[:5])
    urls = [(t, k, v) for t, a in d.elems for k, v in a.items() if k in ("href", "src", "xlink:href", "action")
            and v and not v.startswith("#")]
    check(not urls, name + ": no URL but #anchors", urls[:5])
    metas = [a for t, a in d.elems if t == "meta" and a.get("http-equiv")]
    check(len(metas) == 1 and "default-src 'none'" in metas[0].get("content", ""), name + ": the CSP forbids every request",
          metas)
    check("PWNED" not in d.title and "PWNED" not in dom.split("<body", 1)[0], name + ": no script ran (title unchanged)",
          d.title)
    reqs = []
    try:
        log = json.load(open(net))
        for e in log.get("events", []):
            p = e.get("params", {})
            if "file://" in str(p.get("network_isolation_key", "")) and "url" in p and not p["url"].startswith("file:"):
                reqs.append(p["url"])
    except (OSError, ValueError) as e:
        reqs.append("no net log: %s" % e)
    check(not reqs, name + ": no request left the page", reqs[:5])
    return dom


def chart_checks(name, dom, tmp, shots):
    svgs = re.findall(r"<svg\b.*?</svg>", dom, re.S)
    check(len(svgs) == 4, name + ": four charts inline as SVG", len(svgs))
    colours = {"gpu": (0x1f, 0x77, 0xb4), "5xx": (0x1f, 0x77, 0xb4)}
    for k, svg in enumerate(svgs):
        page = os.path.join(tmp, "%s-chart%d.html" % (name, k))
        open(page, "w", encoding="utf-8").write(
            "<!DOCTYPE html><html><head><meta charset='utf-8'><style>body{margin:0}</style></head><body>%s</body></html>" % svg)
        png = os.path.join(tmp, "%s-chart%d.png" % (name, k))
        m = re.search(r'viewBox="0 0 (\d+) (\d+)"', svg)
        wh = "%s,%s" % (m.group(1), m.group(2)) if m else "980,420"
        chrome(["--window-size=" + wh, "--screenshot=" + png, "file://" + page], tmp)
        ok = os.path.exists(png)
        drawn = 0
        if ok:
            w, h, rows = png_pixels(png)
            # not blank: coloured pixels (not white, not grey) in the plot
            drawn = sum(1 for row in rows for (r, g, b) in row if max(r, g, b) - min(r, g, b) > 60)
            if shots:
                shutil.copy(png, os.path.join(shots, os.path.basename(png)))
        check(ok and drawn > 500, name + ": chart %d is drawn" % k, "coloured pixels: %d" % drawn)


def html_text(dom):
    """The text of a page, as a reader sees it."""
    t = mdtext.Text()
    t.feed("<body" + dom.split("<body", 1)[-1])
    t.flush()
    return "\n".join(t.lines)


def main():
    bin_ = os.path.abspath(sys.argv[1])
    if not CHROME:
        print("browser: skipped: chromium is not installed (make test-browser installs it and runs this)")
        print("browser: 0 passed, 0 failed")
        return
    shots = os.environ.get("BROWSER_SHOTS")
    if shots:
        os.makedirs(shots, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="iq-browser-")
    try:
        out = os.path.join(tmp, "sample")
        subprocess.run([bin_, "analyze", SAMPLE, "-o", out, "--quiet"], check=True)
        dom = page_checks("sample", os.path.join(out, "postmortem.html"), os.path.join(out, "postmortem.md"), tmp)
        chart_checks("sample", dom, tmp, shots)
        if shots:
            chrome(["--window-size=1280,2400", "--screenshot=" + os.path.join(shots, "postmortem-top.png"),
                    "file://" + os.path.join(out, "postmortem.html")], tmp)
        # the hostile bundle of inert.py: its markup, links and escapes stay text
        import inert
        hb = os.path.join(tmp, "hostile.tar.gz")
        inert.make_hostile(hb)
        hout = os.path.join(tmp, "hostile")
        subprocess.run([bin_, "analyze", hb, "-o", hout, "--quiet"], check=True)
        hdom = page_checks("hostile", os.path.join(hout, "postmortem.html"), os.path.join(hout, "postmortem.md"), tmp, True)
        check("<script>document.title='PWNED'</script>" in html_text(hdom), "hostile: the payload shows as text")
        if shots:
            chrome(["--window-size=1280,2400", "--screenshot=" + os.path.join(shots, "hostile-top.png"),
                    "file://" + os.path.join(hout, "postmortem.html")], tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    T.done()


if __name__ == "__main__":
    main()
