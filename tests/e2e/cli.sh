#!/bin/sh
# cli.sh BIN: the command line as a user meets it: help on every command,
# usage errors that say what is wrong (and what was meant), exit 2.
bin=$1
. tests/e2e/lib.sh
# expect STATUS PATTERN CMD...: exit STATUS, and stderr (stdout for exit 0
# with an empty stderr expected) matches the grep pattern
expect() {
  want=$1 pat=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" -ne "$want" ]; then
    ko "$*: exit $rc, expected $want"; sed 's/^/  /' "$tmp/err" | head -5
  elif [ -n "$pat" ] && ! grep -q -- "$pat" "$tmp/err" "$tmp/out"; then
    ko "$*: output lacks '$pat':"; sed 's/^/  /' "$tmp/err" | head -5
  else
    ok
  fi
}

# --- help and usage errors ---------------------------------------------------
expect 0 "^usage: inquest analyze BUNDLE..." "$bin" analyze --help
expect 0 "^usage: inquest query" "$bin" query -h
# help wins over an error before it on the line
expect 0 "^usage: inquest analyze" "$bin" analyze --bogus --help
expect 0 "^inquest .*: explain an outage" "$bin" --help
expect 2 "^inquest: needs a command; the commands:" "$bin"
grep -q "^commands:" "$tmp/err" && ok || ko "inquest alone: no command list on stderr"
expect 2 "unknown command 'analyz'; did you mean 'analyze'?" "$bin" analyz x.tgz
expect 2 "unknown command 'frobnicate' (see 'inquest help')" "$bin" frobnicate
expect 2 "analyze: unknown option '--jbos'; did you mean '--jobs'?" "$bin" analyze --jbos 2 x.tgz
expect 2 "analyze: unknown option '--max-member'; did you mean '--max-member-bytes'?" "$bin" analyze --max-member 1G x.tgz
expect 2 "rules: no verb 'mach'; did you mean 'match'?" "$bin" rules mach x.log
expect 2 "rules: needs a verb: list|lint|test|explain|match" "$bin" rules
expect 2 "help: no command 'anlyze'; did you mean 'analyze'?" "$bin" help anlyze
expect 2 "analyze: --lang needs a value: --lang en|tr" "$bin" analyze x.tgz --lang
expect 2 "report: --format takes md, html, json or text, not 'pdf'" "$bin" report --db x.db --format pdf
expect 2 "timeline: --format takes text, md, json or csv, not 'tsv'" "$bin" timeline --db x.db --format=tsv
expect 2 "ingest: --db FILE is required" "$bin" ingest x.tgz
expect 2 "analyze: needs BUNDLE..." "$bin" analyze
expect 2 "parse: takes FILE, and 'b.log' is one too many" "$bin" parse a.log b.log
expect 2 "detect: takes no arguments, not 'x.db'" "$bin" detect x.db
expect 2 "analyze: --quiet takes no value ('--quiet=1')" "$bin" analyze --quiet=1 x.tgz
expect 2 "analyze: --jobs takes a number of parser threads from 1 to 64, not '0'" "$bin" analyze -j 0 x.tgz
expect 2 "timeline: --limit takes a number of records greater than 0, not 'ten'" "$bin" timeline --db x.db --limit ten
expect 2 "parse: unknown format 'crii'; did you mean 'cri'?" "$bin" parse --format crii x.log
expect 2 "completion: takes bash or zsh, not 'fish'" "$bin" completion fish
# every usage error ends with where the help is
expect 2 "^see 'inquest ingest --help'$" "$bin" ingest x.tgz
# --opt=value and -- work as getopt's
printf 'plain line\n' > "$tmp/-x.log"
expect 0 '"text":"plain line"' "$bin" parse --format=plain -- "$tmp/-x.log"

# --- --fail-on ---------------------------------------------------------------
sample=fixtures/sample/sample-bundle.tar.gz
# failon WANT-EXIT WANT-STDERR-LINES ARG...: the --fail-on lines of stderr, joined by |
failon() {
  want=$1 lines=$2; shift 2
  "$bin" analyze "$sample" -o "$tmp/fo" -q "$@" >/dev/null 2>"$tmp/err"; rc=$?
  got=$(grep -e '--fail-on' "$tmp/err" | tr '\n' '|')
  [ $rc -eq "$want" ] && [ "$got" = "$lines" ] && ok || ko "analyze $*: exit $rc (expected $want), '$got', expected '$lines'"
}
# the sample is a GPU OOM cascade, and its host OOM kills confirm host-memory-oom too
failon 1 "inquest: --fail-on confirmed: gpu-oom-cascade is confirmed (exit 1)|inquest: --fail-on confirmed: host-memory-oom is confirmed (exit 1)|" --fail-on confirmed
failon 1 "inquest: --fail-on gpu-oom-cascade=confirmed: gpu-oom-cascade is confirmed (exit 1)|" --fail-on gpu-oom-cascade=confirmed
failon 0 "" --fail-on gpu-oom-cascade=oom_no_cascade,gpu-oom-cascade=ruled_out_host_oom
failon 1 "inquest: --fail-on host-memory-oom=not_detected,gpu-hardware-fault=not_detected: gpu-hardware-fault is not_detected (exit 1)|" \
  --fail-on host-memory-oom=not_detected,gpu-hardware-fault=not_detected
failon 1 "inquest: --fail-on host-memory-oom=confirmed: host-memory-oom is confirmed (exit 1)|" \
  --fail-on gpu-oom-cascade=inconclusive --fail-on host-memory-oom=confirmed
# what is wrong with a --fail-on is a usage error, before anything is read or written
rm -rf "$tmp/fo"
expect 2 "analyze: --fail-on takes VERDICT or PATTERN=VERDICT, comma-separated; '' has an empty one" "$bin" analyze "$sample" -o "$tmp/fo" --fail-on ''
expect 2 "analyze: --fail-on takes VERDICT or PATTERN=VERDICT, comma-separated; 'confirmed,' has an empty one" "$bin" analyze "$sample" -o "$tmp/fo" --fail-on confirmed,
expect 2 "analyze: --fail-on: no pattern 'gpu-oom-cascad'; did you mean 'gpu-oom-cascade'?" "$bin" analyze "$sample" -o "$tmp/fo" --fail-on gpu-oom-cascad=confirmed
expect 2 "analyze: --fail-on: pattern 'host-memory-oom' has no verdict 'oom_no_cascade' (its verdicts: confirmed, not_detected, inconclusive)" \
  "$bin" analyze "$sample" -o "$tmp/fo" --fail-on host-memory-oom=oom_no_cascade
expect 2 "analyze: --fail-on: no pattern has a verdict 'confirmd'; did you mean 'confirmed'?" "$bin" analyze "$sample" -o "$tmp/fo" --fail-on confirmd
[ ! -e "$tmp/fo" ] && ok || ko "a --fail-on usage error created the output folder"

# --- query ----------------------------------------------------------------------
"$bin" analyze "$sample" -o "$tmp/s" -q || ko "analyze the sample: exit $?"
db=$tmp/s/inquest.db
expect 2 "query: --db FILE is required: the database to query" "$bin" query "SELECT 1"
expect 2 "query: needs the SQL to run" "$bin" query --db "$db"
# the pragmas that only read are allowed, in both spellings
expect 0 "" "$bin" query --db "$db" "PRAGMA table_info(files)"
grep -q "^2	bundle	TEXT	1	NULL	0$" "$tmp/out" && ok || ko "PRAGMA table_info(files): $(head -3 "$tmp/out")"
expect 0 "" "$bin" query --db "$db" --format csv "SELECT name FROM pragma_table_info('records') WHERE pk = 1"
[ "$(cat "$tmp/out")" = "$(printf 'name
id')" ] && ok || ko "pragma_table_info('records'): $(cat "$tmp/out")"
expect 0 "" "$bin" query --db "$db" "PRAGMA index_list(records)"
expect 0 "" "$bin" query --db "$db" "PRAGMA user_version"
# and the ones that write are not
expect 2 "not authorized" "$bin" query --db "$db" "PRAGMA user_version = 7"
expect 2 "not authorized" "$bin" query --db "$db" "PRAGMA writable_schema = 1"
expect 2 "not authorized" "$bin" query --db "$db" "PRAGMA journal_mode = DELETE"
# --schema: the tables and views with the schema's comments, with or without a database
expect 0 "" "$bin" query --schema
grep -q "^files (table): One row per file of the bundle" "$tmp/out" && grep -q "^timeline (view): Every record with its file" "$tmp/out" \
  && grep -q "^  bytes            INTEGER                      decompressed bytes read$" "$tmp/out" && ok || ko "query --schema: $(head -3 "$tmp/out")"
expect 0 "" "$bin" query --db "$db" --schema http_upstreams
[ "$(grep -c '^  [a-z]' "$tmp/out")" = 5 ] && grep -q "^  attempt          INTEGER PRIMARY KEY NOT NULL 0, 1, ... in the order tried$" "$tmp/out" \
  && ! grep -q "^files" "$tmp/out" && ok || ko "query --schema http_upstreams: $(cat "$tmp/out")"
expect 0 "" "$bin" query --schema --format csv meta
[ "$(cat "$tmp/out")" = "$(printf 'name,kind,type,comment
meta,table,,"Key/value facts about the database: schema version, tool version, bundles ingested."
meta.key,column,TEXT PRIMARY KEY NOT NULL,
meta.value,column,TEXT,')" ] \
  && ok || ko "query --schema --format csv meta: $(cat "$tmp/out")"
expect 2 "query: --schema: no table or view 'file'; did you mean 'files'?" "$bin" query --schema file

# --- timeline --tag -----------------------------------------------------------
expect 2 "timeline: --tag: no signal 'nosuchsignal' (inquest rules list shows them)" "$bin" timeline --db "$db" --tag nosuchsignal
expect 2 "timeline: --tag: no signal 'cuda-om'; did you mean 'cuda-oom'?" "$bin" timeline --db "$db" --tag cuda-om
# a signal the packs define that matched nothing here: empty, and said
expect 0 "timeline: no record of this database matched signal 'gpu-xid'" "$bin" timeline --db "$db" --tag gpu-xid
[ ! -s "$tmp/out" ] && ok || ko "timeline --tag gpu-xid printed rows"
expect 0 "" "$bin" timeline --db "$db" --tag cuda-oom --format csv
[ "$(tail -n +2 "$tmp/out" | wc -l)" -gt 0 ] && [ ! -s "$tmp/err" ] && ok || ko "timeline --tag cuda-oom: no rows"

# --- output paths ---------------------------------------------------------------
: > "$tmp/afile"
expect 2 "analyze: -o takes the folder to write inquest.db, findings.json and postmortem.md into: '$tmp/afile' is a file, not a folder" \
  "$bin" analyze "$sample" -o "$tmp/afile"
expect 2 "'$tmp/afile' is a file, not a folder" "$bin" analyze "$sample" -o "$tmp/afile/sub"
expect 0 "" "$bin" analyze "$sample" -o "$tmp/new/deep/out" -q
[ -s "$tmp/new/deep/out/postmortem.md" ] && [ -d "$tmp/new/deep/out/charts" ] && ok || ko "analyze -o new/deep/out: no outputs"
expect 0 "" "$bin" report --db "$db" -o "$tmp/missing/pm.md"
[ -s "$tmp/missing/pm.md" ] && [ -d "$tmp/missing/charts" ] && ok || ko "report -o missing/pm.md: no report or charts"
expect 2 "report: -o takes the file to write the report to: '$tmp/missing' is a folder, not a file" "$bin" report --db "$db" -o "$tmp/missing"
expect 0 "" "$bin" ingest "$sample" --db "$tmp/newdir/i.db" -q
[ -s "$tmp/newdir/i.db" ] && ok || ko "ingest --db newdir/i.db: no database"

# --- '-': the bundle on stdin ----------------------------------------------------
# piped, it is streamed and named stdin; the findings are those of the file
strip() { grep -v '"version"\|"paths"\|^ *"-"$\|^ *"[^"]*sample-bundle.tar.gz"$' "$1" | sed 's/sample-bundle\.tar\.gz/stdin/g'; }
cat "$sample" | "$bin" analyze - -o "$tmp/si" -q; rc=$?
[ $rc -eq 0 ] && strip "$tmp/s/findings.json" > "$tmp/f1" && strip "$tmp/si/findings.json" > "$tmp/f2" && diff -u "$tmp/f1" "$tmp/f2" > "$tmp/diff" \
  && ok || { ko "analyze - (a pipe): exit $rc, findings differ from the file's"; head -20 "$tmp/diff"; }
n=$(q "$tmp/si/inquest.db" "SELECT count(*) FROM files WHERE path LIKE 'stdin!incident-2026-11-30/%'")
[ "$n" = 29 ] && ok || ko "analyze -: $n files named stdin!..., expected 29"
"$bin" analyze - -o "$tmp/sr" -q < "$sample"; rc=$?
[ $rc -eq 0 ] && [ "$(q "$tmp/sr/inquest.db" "SELECT count(*) FROM files")" = 29 ] && ok || ko "analyze - < file: exit $rc"
# a zip, which a pipe cannot seek in: read from its local headers
python3 -c 'import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("a/kern.log", "May 15 23:09:30 node-1 kernel: Out of memory: Killed process 15784 (python3) total-vm:11964kB, anon-rss:4288kB, file-rss:3028kB, shmem-rss:0kB\n")
    z.writestr("b/note.txt", "nothing\n")' "$tmp/b.zip"
cat "$tmp/b.zip" | "$bin" rules match - >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] && [ "$(cut -f1,2 "$tmp/out")" = "$(printf -- '-!a/kern.log:1\thost-oom')" ] && ok || { ko "rules match - (a zip on a pipe): exit $rc: $(cat "$tmp/out" "$tmp/err")"; }
# cut short on a pipe: what came before the cut, exit 5
head -c 5000 "$sample" | "$bin" analyze - -o "$tmp/sc" -q 2>"$tmp/err"; rc=$?
[ $rc -eq 5 ] && [ "$(q "$tmp/sc/inquest.db" "SELECT count(*) FROM files WHERE status = 'done'")" = 2 ] && ok || ko "head -c 5000 | analyze -: exit $rc"
expect 2 "analyze: '-' (stdin) can be read once, not twice" "$bin" analyze - - -o "$tmp/x"

echo "cli: $pass passed, $fail failed"
[ $fail -eq 0 ]
