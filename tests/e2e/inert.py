#!/usr/bin/env python3
"""inert.py BIN: log text is hostile input. The sample bundle, with markup,
links, an HTML comment, terminal escapes and control bytes put into the
first CUDA OOM line (so that the summary's evidence, the timeline and the
evidence table quote it), into an error line no signal explains (the
appendix), and into the name and lines of a member of its own. Every
output shows it as inert text: postmortem.md rendered by cmark-gfm (raw
HTML let through) has no element, attribute or link but ours, every table
row keeps its columns and the text shows as written; postmortem.html the
same, read by Python's HTML parser (browser.py --hostile also runs it in
Chromium); the terminal outputs (analyze, report --format text, timeline,
show) carry no escape or control byte. Last line "inert: N passed, N failed".

make_hostile(OUT) writes the bundle (browser.py uses it too)."""
import gzip
import html.parser
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mdtext  # noqa: E402
from tally import Tally  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
SAMPLE = os.path.join(ROOT, "fixtures", "sample", "sample-bundle.tar.gz")
OOM_LOG = ("incident-2026-11-30/nodes/gpu-node-1/var/log/pods/inference_vllm-0_7c1e4a52-3b9d-4f0e-a6d2-"
           "9e81c5f03b17/vllm/0.log")
# written for this test: what a hostile (or merely unlucky) log line may hold
PAYLOAD = ("<script>document.title='PWNED'</script> <img src=x onerror=\"document.title='PWNED'\"> "
           "[click](javascript:alert(1)) ![p](http://127.0.0.1:9/p.png) <!-- hidden --> javascript:alert(2) "
           "http://evil.example/x www.evil.example | `tick` **b** _i_ &lt; \x1b[31mred\x1b[0m \x1b]0;PWNED\x07 "
           "bell\x07 back\x08 \xc2\x9b2J del\x7f")
NAME = "incident-2026-11-30/notes/<img src=x onerror=alert(1)>|`x`[l](javascript:1)\x1b[2J.log"
CONTROL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")


def make_hostile(out):
    src = tarfile.open(SAMPLE)
    buf = io.BytesIO()
    dst = tarfile.open(fileobj=buf, mode="w")
    for m in src.getmembers():
        data = src.extractfile(m).read() if m.isfile() else None
        if m.name == OOM_LOG:
            lines = data.decode("utf-8").split("\n")
            for i, l in enumerate(lines):
                if "torch.OutOfMemoryError" in l or "AsyncLLM output_handler failed" in l:
                    k = l.index(") ") + 2
                    lines[i] = l[:k] + PAYLOAD + " " + l[k:]
            data = "\n".join(lines).encode("utf-8")
            m.size = len(data)
        dst.addfile(m, io.BytesIO(data) if data is not None else None)
        if m.name == "incident-2026-11-30/README.txt":
            extra = ("2026-11-30T14:12:05Z ERROR %s\n2026-11-30T14:12:06Z ERROR upstream failed %s\n"
                     % (PAYLOAD, PAYLOAD)).encode("utf-8")
            n = tarfile.TarInfo(NAME)
            n.size, n.mtime, n.mode = len(extra), m.mtime, 0o644
            dst.addfile(n, io.BytesIO(extra))
    dst.close()
    with open(out, "wb") as f:
        f.write(gzip.compress(buf.getvalue(), mtime=0))




T = Tally("inert")
check = T.check


class Elems(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elems, self.comments, self.rows, self._row = [], [], [], None

    def handle_starttag(self, tag, attrs):
        self.elems.append((tag, dict(attrs)))
        if tag == "tr":
            self._row = 0
        elif tag in ("td", "th") and self._row is not None:
            self._row += 1

    def handle_endtag(self, tag):
        if tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None
        if tag == "table":
            self.rows.append(None)

    def handle_comment(self, data):
        self.comments.append(data)


def markup_checks(name, html_text, allowed):
    p = Elems()
    p.feed(html_text)
    bad = [(t, a) for t, a in p.elems if t not in allowed]
    check(not bad, name + ": no element from the bundle", bad[:3])
    check(not [1 for _, a in p.elems for k in a if k.startswith("on")], name + ": no event handler")
    # the links of a postmortem: #anchors, and its own charts
    links = [a.get("href") or a.get("src") for t, a in p.elems if (a.get("href") or a.get("src"))
             and not (a.get("href") or "").startswith("#")
             and not (t == "img" and re.fullmatch(r"charts/[a-z0-9-]+\.svg", a.get("src", "")))]
    check(not links, name + ": no link but #anchors", links[:3])
    check(not [c for c in p.comments if "hidden" in c], name + ": no HTML comment from the bundle")
    # every table keeps its columns: each row as many cells as its header
    widths, broken = [], []
    for r in p.rows + [None]:
        if r is None:
            if widths and len(set(widths)) > 1:
                broken.append(widths)
            widths = []
        else:
            widths.append(r)
    check(not broken, name + ": every table row has its table's columns", broken[:2])


def main():
    bin_ = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="iq-inert-")
    bundle = os.path.join(tmp, "hostile.tar.gz")
    make_hostile(bundle)
    out = os.path.join(tmp, "out")
    r = subprocess.run([bin_, "analyze", bundle, "-o", out], capture_output=True)
    check(r.returncode == 0, "analyze", r.stderr[-300:])
    check(not CONTROL.search(r.stdout + r.stderr), "analyze's terminal output has no control byte")
    md = open(os.path.join(out, "postmortem.md"), "rb").read()
    check(not CONTROL.search(md), "postmortem.md has no control byte")
    body = md.decode("utf-8").split("\n## Coverage\n")[0]
    check(body.count("PWNED") >= 2, "the payload is quoted in the postmortem's body", body.count("PWNED"))
    # as GitHub renders it (raw HTML let through): inert, and the text as written
    h = mdtext.to_html(os.path.join(out, "postmortem.md"))
    markup_checks("postmortem.md", h, {"h1", "h2", "h3", "p", "ul", "li", "input", "blockquote", "table", "thead",
                                        "tbody", "tr", "th", "td", "code", "pre", "strong", "em", "a", "img"})
    check(not [a for t, a in Elems().elems], "parser sanity")
    text = "\n".join(mdtext.text_of(os.path.join(out, "postmortem.md")).lines)
    shown = ("<script>document.title='PWNED'</script> <img src=x onerror=\"document.title='PWNED'\"> "
             "[click](javascript:alert(1)) ![p](http://127.0.0.1:9/p.png) <!-- hidden --> javascript:alert(2) "
             "http://evil.example/x www.evil.example | `tick` **b** _i_ &lt; \u241b[31mred\u241b[0m \u241b]0;PWNED\u2407 "
             "bell\u2407 back\u2408 \ufffd2J del\u2421")
    check(shown[:200] in text, "the rendered text shows the line as written (controls as their pictures)",
          [l for l in text.split("\n") if "PWNED" in l][:1])
    # the evidence table's row of the member with the hostile name
    rel = NAME.replace("\x1b", "\u241b")
    check(("`%s` | 1 |" % rel) in text or ("`%s` | 2 |" % rel) in text, "the hostile member name in the evidence table",
          [l for l in text.split("\n") if "notes/" in l][:1])
    # postmortem.html, read by an HTML parser
    ht = open(os.path.join(out, "postmortem.html"), "rb").read()
    check(not CONTROL.search(ht), "postmortem.html has no control byte")
    markup_checks("postmortem.html", ht.decode("utf-8").split("<body>", 1)[1],
                  {"h1", "h2", "h3", "p", "ul", "li", "input", "blockquote", "table", "thead", "tbody", "tr", "th", "td",
                   "code", "pre", "strong", "em", "a", "figure", "figcaption", "svg", "rect", "line", "polyline", "path",
                   "text", "g", "title"})
    # the terminal
    for args in (["report", "--db", os.path.join(out, "inquest.db"), "--format", "text"],
                 ["timeline", "--db", os.path.join(out, "inquest.db")],
                 ["timeline", "--db", os.path.join(out, "inquest.db"), "--format", "md"],
                 ["sniff", bundle]):
        r = subprocess.run([bin_] + args, capture_output=True)
        check(r.returncode == 0 and not CONTROL.search(r.stdout + r.stderr), " ".join(args[:1] + args[3:]) +
              ": no control byte on the terminal", CONTROL.findall(r.stdout + r.stderr)[:3])
    refs = sorted(set(int(n) for n in re.findall(r"\[E(\d+)\]\(#e\d+\)", body)))
    hostile_refs = [n for n in refs if re.search(r'<a id="e%d"></a>E%d \| [^\n]*PWNED' % (n, n), md.decode())]
    check(hostile_refs, "the hostile lines are cited")
    for n in hostile_refs[:4] + [max(refs)]:
        r = subprocess.run([bin_, "show", "E%d" % n, "--db", os.path.join(out, "inquest.db"), "--bundle", bundle, "-C", "1"],
                           capture_output=True)
        check(r.returncode == 0 and not CONTROL.search(r.stdout + r.stderr), "show E%d: no control byte" % n,
              r.stdout[:200])
    # findings.json: the text as it is, JSON-escaped
    f = json.load(open(os.path.join(out, "findings.json"), encoding="utf-8"))
    def strings(o):
        if isinstance(o, str):
            yield o
        elif isinstance(o, dict):
            for v in o.values():
                yield from strings(v)
        elif isinstance(o, list):
            for v in o:
                yield from strings(v)
    texts = [t for t in strings(f) if "PWNED" in t]
    check(texts and all("\x1b[31mred" in t for t in texts if "red" in t), "findings.json keeps the text verbatim",
          texts[:1])
    if os.environ.get("INERT_KEEP"):
        print("inert: bundle kept at %s" % out)
    if not os.environ.get("INERT_KEEP"):
        subprocess.run(["rm", "-rf", tmp])
    T.done()


if __name__ == "__main__":
    main()
