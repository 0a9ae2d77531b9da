#!/bin/sh
# report.sh BIN: the postmortem end to end. Analyzes the sample bundle in
# en and tr and compares postmortem.md with the goldens (GOLDEN=1 rewrites
# them: review the diff before committing); checks the SVG charts are
# well-formed, that every `file:line` the postmortem cites exists in the
# database, and that `inquest report` renders the same Markdown from the
# database alone without changing it.
bin=$1
export TZ=UTC LC_ALL=C
bundle=fixtures/sample/sample-bundle.tar.gz
golden=tests/e2e/golden
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "report: FAIL: $*"; fail=$((fail + 1)); }

for lang in en tr; do
	out=$tmp/$lang
	if ! "$bin" analyze "$bundle" -o "$out" --lang "$lang" --quiet; then
		bad "analyze --lang $lang failed"
		continue
	fi
	if [ -n "$GOLDEN" ]; then
		mkdir -p "$golden"
		cp "$out/postmortem.md" "$golden/postmortem.$lang.md"
		echo "report: rewrote $golden/postmortem.$lang.md"
	fi
	if diff -u "$golden/postmortem.$lang.md" "$out/postmortem.md"; then ok; else bad "postmortem.$lang.md differs from the golden"; fi

	# the charts: there, and well-formed XML
	if python3 - "$out/charts" <<'PY'
import sys, os, xml.dom.minidom
d = sys.argv[1]
want = ["gpu-memory.svg", "lb-5xx.svg", "upstreams.svg", "pod-lifetimes.svg"]
for f in want:
    p = os.path.join(d, f)
    if not os.path.exists(p):
        sys.exit("missing chart " + p)
    doc = xml.dom.minidom.parse(p)
    if doc.documentElement.tagName != "svg":
        sys.exit(p + ": root is not <svg>")
PY
	then ok; else bad "charts ($lang)"; fi

	# every evidence reference names a record (or a skipped line) in the database
	if python3 - "$out/postmortem.md" "$out/inquest.db" <<'PY'
import re, sqlite3, sys
md, db = sys.argv[1], sys.argv[2]
con = sqlite3.connect("file:" + db + "?mode=ro", uri=True)
refs = set(re.findall(r"`(…?)([^`\s]+):(\d+)`", open(md, encoding="utf-8").read()))
missing = []
for cut, path, line in refs:
    path = path.replace("\\|", "|")
    op, arg = ("LIKE", "%" + path) if cut else ("=", path)
    q = ("SELECT 1 FROM records r JOIN files f ON f.id = r.file_id WHERE f.path " + op +
         " ? AND r.line <= ? AND r.line + max(r.nlines, 1) > ? UNION ALL"
         " SELECT 1 FROM skips k JOIN files f ON f.id = k.file_id WHERE f.path " + op +
         " ? AND k.first_line = ? LIMIT 1")
    if not con.execute(q, (arg, int(line), int(line), arg, int(line))).fetchone():
        missing.append(path + ":" + line)
if not refs:
    sys.exit("no evidence references found")
if missing:
    sys.exit("not in the database: " + ", ".join(sorted(missing)[:10]))
PY
	then ok; else bad "evidence references ($lang)"; fi

	# inquest report: the same Markdown from the database, which it leaves alone
	sum1=$(cksum < "$out/inquest.db")
	mkdir -p "$tmp/r$lang"
	if "$bin" report --db "$out/inquest.db" --lang "$lang" -o "$tmp/r$lang/postmortem.md" &&
	   cmp -s "$out/postmortem.md" "$tmp/r$lang/postmortem.md" &&
	   [ -f "$tmp/r$lang/charts/gpu-memory.svg" ]; then ok; else bad "report --lang $lang differs from analyze"; fi
	if [ "$sum1" = "$(cksum < "$out/inquest.db")" ]; then ok; else bad "report changed the database"; fi
done

# the other formats
if "$bin" report --db "$tmp/en/inquest.db" --format json > "$tmp/f.json" &&
   cmp -s "$tmp/f.json" "$tmp/en/findings.json"; then ok; else bad "report --format json differs from findings.json"; fi
if "$bin" report --db "$tmp/en/inquest.db" --format text > "$tmp/t.txt" &&
   grep -q '^gpu-oom-cascade: confirmed' "$tmp/t.txt" && ! grep -q "$(printf '\033')" "$tmp/t.txt"; then ok; else bad "report --format text"; fi
"$bin" report --db "$tmp/en/inquest.db" --format pdf 2> /dev/null
if [ $? -eq 2 ]; then ok; else bad "report --format pdf is not a usage error"; fi
"$bin" report --db "$tmp/nonexistent.db" 2> /dev/null
if [ $? -eq 3 ]; then ok; else bad "report on a missing database does not exit 3"; fi

echo "report: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
