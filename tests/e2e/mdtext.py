#!/usr/bin/env python3
"""mdtext.py: Markdown as a reader sees it. Renders a Markdown file with
cmark-gfm (GitHub's own renderer: tables, autolinks, strikethrough, the tag
filter; raw HTML let through, so that any that a log smuggled in would
show) and prints the text of the HTML it makes: one block a line, table
cells joined by " | ", list items with "- ", links as "text <href>" and
images as "![alt <src>]", code as `text`.

usage: mdtext.py FILE.md            the text, on stdout
       mdtext.py --html FILE.md     the HTML cmark-gfm made
The tests compare this text (not the Markdown source) with goldens, and
check that what a log line said shows as it said it."""
import html.parser
import subprocess
import sys

EXT = ["--extension", "table", "--extension", "autolink", "--extension", "strikethrough",
       "--extension", "tagfilter", "--unsafe"]
BLOCK = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "tr", "pre", "blockquote", "table",
         "ul", "ol", "hr", "div"}


def to_html(path):
    r = subprocess.run(["cmark-gfm"] + EXT + [path], capture_output=True, check=True)
    return r.stdout.decode("utf-8")


class Text(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.lines, self.cur, self.cells, self.href = [], [], None, []
        self.tags = []   # every start tag seen: (tag, attrs)

    def flush(self):
        t = "".join(self.cur).strip()
        if t:
            self.lines.append(t)
        self.cur = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag in BLOCK:
            self.flush()
        if tag == "li":
            self.cur.append("- ")
        elif tag == "tr":
            self.cells = []
        elif tag in ("td", "th"):
            self.cur = []
        elif tag == "code":
            self.cur.append("`")
        elif tag == "a":
            self.href.append(dict(attrs).get("href"))
        elif tag == "img":
            a = dict(attrs)
            self.cur.append("![%s <%s>]" % (a.get("alt", ""), a.get("src", "")))
        elif tag == "input":
            self.cur.append("[x] " if "checked" in dict(attrs) else "[ ] ")
        elif tag == "br":
            self.cur.append(" ")

    def handle_endtag(self, tag):
        if tag == "code":
            self.cur.append("`")
        elif tag == "a":
            h = self.href.pop() if self.href else None
            if h:
                self.cur.append(" <%s>" % h)
        elif tag in ("td", "th"):
            self.cells.append("".join(self.cur).strip())
            self.cur = []
        elif tag == "tr":
            self.lines.append(" | ".join(self.cells))
            self.cells = None
            self.cur = []
        elif tag in BLOCK:
            self.flush()

    def handle_data(self, data):
        self.cur.append(data)

    def handle_comment(self, data):
        # an HTML comment in the Markdown reached the page: show it
        self.cur.append("<!--%s-->" % data)


def text_of(path):
    p = Text()
    p.feed(to_html(path))
    p.close()
    p.flush()
    return p


if __name__ == "__main__":
    if sys.argv[1] == "--html":
        sys.stdout.write(to_html(sys.argv[2]))
    else:
        sys.stdout.write("\n".join(text_of(sys.argv[1]).lines) + "\n")
