#!/bin/sh
# report.sh BIN: the postmortem end to end. Analyzes the sample bundle in
# en and tr and compares postmortem.md with the goldens (GOLDEN=1 rewrites
# them: review the diff before committing); checks the SVG charts are
# well-formed, that every `file:line` the postmortem cites exists in the
# database, that the limits section carries the exact figures (and each
# proposal's value redone from its inputs), and that `inquest report`
# renders the same Markdown from the database alone without changing it.
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
	# what a reader sees: the text GitHub's renderer (cmark-gfm) makes of it
	python3 tests/e2e/mdtext.py "$out/postmortem.md" > "$out/postmortem.txt"
	[ -n "$GOLDEN" ] && cp "$out/postmortem.txt" "$golden/postmortem.$lang.txt"
	if diff -u "$golden/postmortem.$lang.txt" "$out/postmortem.txt"; then ok; else bad "rendered postmortem.$lang.md differs from the golden text"; fi
	# postmortem.html (read here by Python's HTML parser; browser.py reads it
	# in Chromium): the same headings and table rows as GitHub shows the Markdown
	if python3 - "$out/postmortem.html" "$out/postmortem.md" <<'PY'
import sys
sys.path.insert(0, "tests/e2e")
import mdtext
page = open(sys.argv[1], encoding="utf-8").read()
t = mdtext.Text()
t.feed("<body" + page.split("<body", 1)[1])
t.flush()
want = mdtext.text_of(sys.argv[2]).lines
pick = lambda ls: [l for l in ls if " | " in l]
heads = [l for l in want if l.startswith("Postmortem") or l.startswith("Olay")]
if pick(t.lines) != pick(want) or not heads or t.lines[0] != want[0] or page.count("<svg") != 4:
    bad = next(((a, b) for a, b in zip(pick(t.lines), pick(want)) if a != b), None)
    sys.exit("html differs: %r" % (bad,))
PY
	then ok; else bad "postmortem.$lang.html does not read as the Markdown"; fi
	# code spans show no escapes: the time sources read as written
	if grep -q '(`assumed_utc`)' "$out/postmortem.txt" && ! grep -q '\\_' "$out/postmortem.txt"; then ok
	else bad "rendered postmortem.$lang.md shows backslashes in code"; fi

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

	# evidence: the body cites short references only, each one a row of
	# the evidence table, and every row names a record (its span, or a
	# line it quotes) or a skipped line of the database, its text standing
	# in the record
	if python3 - "$out/postmortem.md" "$out/inquest.db" <<'PY'
import re, sqlite3, sys
sys.path.insert(0, "tests/e2e")
import mdtext
md, db = sys.argv[1], sys.argv[2]
src = open(md, encoding="utf-8").read()
body = src.split("\n## Evidence\n" if "\n## Evidence\n" in src else "\n## Kanıtlar\n")[0]
long_refs = re.findall(r"`[^`]*(?:\.log|\.json|\.csv|\.yaml|\.gz):\d+`", body)
if long_refs:
    sys.exit("long references in the body: " + ", ".join(long_refs[:3]))
cited = set(int(n) for n in re.findall(r"\[E(\d+)\]\(#e\1\)", body))
con = sqlite3.connect("file:" + db + "?mode=ro", uri=True)
rows = {}
for l in mdtext.text_of(md).lines:
    m = re.match(r"E(\d+) \| `(.+)` \| (\d+)(?:–\d+)? \| [^|]* \| (.*) \| `inquest show E\1`$", l)
    if m:
        # the text, then the summary column: the text is what precedes it
        text = m.group(4).rsplit(" | ", 1)[0]
        rows[int(m.group(1))] = (m.group(2), int(m.group(3)), text)
if not rows or sorted(rows) != list(range(1, len(rows) + 1)) or cited != set(rows):
    sys.exit("cited %d refs, table has %d rows (%s)" % (len(cited), len(rows), sorted(set(rows) ^ cited)[:5]))
missing = []
for n, (path, line, text) in rows.items():
    full = "sample-bundle.tar.gz!" + path
    q = ("SELECT r.text FROM records r JOIN files f ON f.id = r.file_id WHERE f.path = ?"
         " AND r.line <= ? AND r.line + max(r.nlines, 1) > ? UNION ALL"
         " SELECT qt.text FROM quotes qt JOIN records r ON r.id = qt.record_id"
         " JOIN files f ON f.id = r.file_id WHERE f.path = ? AND qt.line = ? UNION ALL"
         " SELECT k.example FROM skips k JOIN files f ON f.id = k.file_id WHERE f.path = ? AND k.first_line = ?")
    got = [t or "" for (t,) in con.execute(q, (full, line, line, full, line, full, line))]
    key = text.rstrip("…").strip()[:60]
    if not got or (text != "–" and not any(key in g for g in got)):
        missing.append("E%d %s:%d" % (n, path, line))
if missing:
    sys.exit("not in the database as cited: " + ", ".join(sorted(missing)[:10]))
PY
	then ok; else bad "evidence references ($lang)"; fi

	# the limits section: its exact figures, and each proposal's row agrees
	# with findings.json and with arithmetic redone here from its inputs
	if python3 - "$out/postmortem.md" "$out/findings.json" "$lang" <<'PY'
import json, sys
md = open(sys.argv[1], encoding="utf-8").read()
f = json.load(open(sys.argv[2]))
lang = sys.argv[3]
head = {"en": "## Memory limits measured in the bundle", "tr": "## Paketin ölçtüğü bellek sınırları"}[lang]
if head not in md:
    sys.exit("no limits section")
sec = md.split(head, 1)[1].split("\n## ", 1)[0]
want = {"en": ["| batch (running requests) | **164** — vllm-2, 2026-11-30T14:16:36.335Z, ",
               "| **123** — vllm-1, 2026-11-30T14:18:31.444Z, ",
               "**481303** (99.7 % × 482752) — vllm-2, 2026-11-30T14:14:03.850Z",
               "**468703** (0.9709 × 482752) — vllm-2, 2026-11-30T14:16:37.090Z",
               "- **KV cache capacity:** 482752 tokens (the engine's GPU KV cache size in tokens); the engine allows 14.73 requests of 32768 tokens at once.",
               "vllm-1 at 2026-11-30T14:13:19.807Z scheduled 32768 tokens (from its crash dump) and tried to allocate 2.00 GiB with 0.38 GiB free.",
               "| `--max-num-seqs` | 256 | **120** sequences | min(largest batch that completed 164, smallest that failed 123 - 1) = 122; rounded down to a multiple of 8: 120 |",
               "| `--max-num-batched-tokens` | 32768 | **6144** tokens | the failed step scheduled 32768 tokens and tried to allocate 2147483648 bytes with 407308861 free: 32768 x 407308861 / 2147483648 = 6215 tokens would have fit; rounded down to a multiple of 256: 6144 |",
               "| `--max-model-len` | 32768 | **3072** tokens | a full batch of 120 sequences of max-model-len tokens fits the KV cache: 482752 / 120 = 4022; rounded down to a multiple of 1024: 3072 |",
               "| prompt-token admission limit (gateway) | – | **3072** tokens | a prompt longer than one step's budget or a sequence's share of the KV cache is refused at the gateway: min(3072, 6144) = 3072 | – |",
               "| 429 threshold (load balancer) | – | **720** requests in flight | answer 429 past 120 running and as many waiting per serving pod: 2 x 120 x 3 pods = 720 requests in flight at the load balancer | – |"],
        "tr": ["| batch (çalışan istek) | **164** — vllm-2, 2026-11-30T14:16:36.335Z, ",
               "- **KV cache kapasitesi:** 482752 token (motorun token cinsinden GPU KV cache boyutu); motor aynı anda 14.73 tane 32768 tokenlık isteğe izin veriyor.",
               "| `--max-num-seqs` | 256 | **120** dizi | min(tamamlanan en büyük batch 164, başarısız olan en küçük batch 123 - 1) = 122; 8'in katına aşağı yuvarlandı: 120 |",
               "32768 x 407308861 / 2147483648 = 6215 token sığardı; 256'nın katına aşağı yuvarlandı: 6144 |",
               "482752 / 120 = 4022; 1024'ün katına aşağı yuvarlandı: 3072 |",
               "| 429 eşiği (yük dengeleyici) | – | **720** uçuştaki istek | pod başına 120 çalışan ve bir o kadar bekleyen istekten sonra 429 döndürülür: 2 x 120 x 3 pod = 720, yük dengeleyicide uçuştaki istek | – |"]}[lang]
miss = [w for w in want if w not in sec]
if "images in flight" in sec or "uçuştaki resim" in sec:
    sys.exit("vision rows in a bundle without a request log of images")
if miss:
    sys.exit("limits section lacks: " + " || ".join(miss))
lim = [p for p in f["patterns"] if p["id"] == "gpu-oom-cascade"][0]["limits"]
rd = lambda v, m: v // m * m if v // m * m > 0 else max(v, 0)
props = {p["setting"]: p for p in lim["proposals"]}
i = lambda p, k: p["inputs"][k]
s = props["--max-num-seqs"]
redo = {"--max-num-seqs": rd(min(i(s, "largest_completed"), i(s, "smallest_failed") - 1), 8)}
b = props["--max-num-batched-tokens"]
redo["--max-num-batched-tokens"] = rd(i(b, "scheduled_tokens") * i(b, "free_bytes") // i(b, "tried_bytes"), 256)
m = props["--max-model-len"]
per = i(m, "capacity_tokens") // i(m, "max_num_seqs")
redo["--max-model-len"] = rd(per, 1024 if per >= 1024 else 256)
redo["prompt-token-admission-limit"] = min(redo["--max-model-len"], redo["--max-num-batched-tokens"])
redo["429-threshold"] = 2 * redo["--max-num-seqs"] * i(props["429-threshold"], "pods")
for k, v in redo.items():
    if props[k]["value"] != v or ("**%d**" % v) not in sec:
        sys.exit("proposal %s: %s in findings, %s redone" % (k, props[k]["value"], v))
PY
	then ok; else bad "limits section ($lang)"; fi

	# inquest report: the same Markdown from the database, which it leaves alone
	sum1=$(cksum < "$out/inquest.db")
	mkdir -p "$tmp/r$lang"
	if "$bin" report --db "$out/inquest.db" --lang "$lang" -o "$tmp/r$lang/postmortem.md" &&
	   cmp -s "$out/postmortem.md" "$tmp/r$lang/postmortem.md" &&
	   [ -f "$tmp/r$lang/charts/gpu-memory.svg" ]; then ok; else bad "report --lang $lang differs from analyze"; fi
	if [ "$sum1" = "$(cksum < "$out/inquest.db")" ]; then ok; else bad "report changed the database"; fi
done

# timeline --format md: each evidence cell renders as the path and line in the database
"$bin" timeline --db "$tmp/en/inquest.db" --format md --limit 40 > "$tmp/tl.md"
if python3 - "$tmp/tl.md" "$tmp/en/inquest.db" <<'PY'
import sqlite3, sys
sys.path.insert(0, "tests/e2e")
import mdtext
con = sqlite3.connect("file:" + sys.argv[2] + "?mode=ro", uri=True)
rows = [l.split(" | ") for l in mdtext.text_of(sys.argv[1]).lines[1:]]
want = ["`%s:%d`" % r for r in con.execute(
    "SELECT file, line FROM timeline WHERE record_id IN (SELECT record_id FROM signal_matches)"
    " ORDER BY ts IS NULL, ts, file, line LIMIT 40")]
got = [r[4] for r in rows]
if got != want or len(got) != 40:
    sys.exit("timeline md evidence cells: %r ... expected %r ..." % (got[:2], want[:2]))
PY
then ok; else bad "timeline --format md: evidence cells"; fi

# findings.json against its schema, and the schema check can fail: a
# verdict outside the contract, a missing schema_version, an evidence
# object with a key the contract lacks
if python3 tests/tools/schema_check.py schema/findings.schema.json "$tmp/en/findings.json" >/dev/null; then ok; else bad "findings.json does not validate"; fi
python3 - "$tmp/en/findings.json" "$tmp/broken" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
os.makedirs(sys.argv[2])
for name, edit in [("verdict", lambda d: d["patterns"][0].update(verdict="bogus")),
                   ("version", lambda d: d.pop("schema_version")),
                   ("evidence", lambda d: d["patterns"][1]["signals"][0]["evidence"][0].update(extra=1)),
                   ("cut", lambda d: d.pop("timeline_truncated"))]:
    x = json.loads(json.dumps(d))
    edit(x)
    json.dump(x, open(os.path.join(sys.argv[2], name + ".json"), "w"))
PY
if [ "$(python3 tests/tools/schema_check.py schema/findings.schema.json "$tmp/broken" | tail -1)" = "schema: 0 passed, 4 failed" ]; then ok
else bad "the schema check passes broken findings"; fi
if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d['schema_version'] == 2 and d['timeline_total'] == 611 and d['timeline_truncated'] is True and len(d['timeline']) == 500 and d['bundle']['names'] == ['sample-bundle.tar.gz']))" "$tmp/en/findings.json"
then ok; else bad "findings.json: schema_version, timeline_total/truncated or bundle.names"; fi

# guidance called for by answers: the demo's engine pages its KV cache and
# its restarts were staggered, so neither of those items is called for; each
# item that is says why; and the self-check catches an item that contradicts
if python3 - "$tmp/en/findings.json" "$tmp/en/postmortem.md" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = [x for x in d["patterns"] if x["id"] == "gpu-oom-cascade"][0]
ids = [g["id"] for g in p["guidance"]]
q = {x["id"]: x["data"] for x in p["questions"]}
assert q["paged-attention"]["enabled"] is True and q["recovery"]["thundering_herd"] is False, q
assert "adopt-paged-attention" not in ids and "stagger-restarts" not in ids, ids
assert ids == ["rate-limit-429", "lower-context-and-batch", "admission-control", "vram-headroom",
               "gpu-aware-autoscaling", "adversarial-load-tests"], ids
g = p["guidance"][3]
assert g["holds"] == [{"term": "signal:cuda-oom", "value": True},
                      {"term": "condition:static-vram-preallocation", "value": True},
                      {"term": "condition:no-expandable-segments", "value": True}], g
md = open(sys.argv[2], encoding="utf-8").read()
assert "paged attention" not in md.split("## Containment")[1].split("## Lessons")[0], "paged attention guidance printed"
PY
then ok; else bad "guidance called for by the demo's answers"; fi
python3 - "$tmp/en/findings.json" "$tmp/contra.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = [x for x in d["patterns"] if x["id"] == "gpu-oom-cascade"][0]
p["guidance"].append({"id": "adopt-paged-attention", "phase": "remediation", "when": "x", "why": "x",
                      "holds": [{"term": "x", "value": True}]})
json.dump(d, open(sys.argv[2], "w"))
PY
python3 tests/e2e/guidance_check.py "$tmp/contra.json" > "$tmp/contra.out"
if grep -q 'adopt-paged-attention is called for' "$tmp/contra.out"; then ok
else bad "the guidance self-check misses a contradiction"; fi

# the E numbers do not depend on the language (inquest show renders in English)
if python3 - "$tmp/en/postmortem.md" "$tmp/tr/postmortem.md" <<'PY'
import re, sys
rows = [re.findall(r"^\| <a id=\"e\d+\"></a>(E\d+) \| (`[^|]*`) \| (\d+)", open(f, encoding="utf-8").read(), re.M) for f in sys.argv[1:]]
sys.exit(not rows[0] or rows[0] != rows[1])
PY
then ok; else bad "the evidence table's references differ between en and tr"; fi

# the other formats
if "$bin" report --db "$tmp/en/inquest.db" --format json > "$tmp/f.json" &&
   cmp -s "$tmp/f.json" "$tmp/en/findings.json"; then ok; else bad "report --format json differs from findings.json"; fi
if "$bin" report --db "$tmp/en/inquest.db" --format text > "$tmp/t.txt" &&
   grep -q '^gpu-oom-cascade: confirmed' "$tmp/t.txt" && ! grep -q "$(printf '\033')" "$tmp/t.txt"; then ok; else bad "report --format text"; fi
if grep -qx '  limits     164 / 123 largest batch completed / smallest failed (running requests); KV cache 482752 tokens' "$tmp/t.txt" &&
   grep -qx '  propose    --max-num-seqs 120, --max-num-batched-tokens 6144, --max-model-len 3072, prompt-token-admission-limit 3072, 429-threshold 720' "$tmp/t.txt"
then ok; else bad "report --format text: the limits lines"; fi
# Turkish labels (sıra, aralık: letters of two bytes) are padded by
# characters: every label line's value starts in column 13, as in English
if "$bin" report --db "$tmp/en/inquest.db" --format text --lang tr > "$tmp/t.tr.txt" &&
   grep -qx '  sıra       vllm-0 -> vllm-1 -> vllm-2' "$tmp/t.tr.txt" &&
   grep -q '^  sınırlar   [0-9]' "$tmp/t.tr.txt" && grep -q '^  aralık     20' "$tmp/t.tr.txt"
then ok; else bad "report --format text --lang tr: labels not aligned"; fi
"$bin" report --db "$tmp/en/inquest.db" --format pdf 2> /dev/null
if [ $? -eq 2 ]; then ok; else bad "report --format pdf is not a usage error"; fi
"$bin" report --db "$tmp/nonexistent.db" 2> /dev/null
if [ $? -eq 3 ]; then ok; else bad "report on a missing database does not exit 3"; fi

echo "report: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
