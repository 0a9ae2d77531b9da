#!/bin/sh
# incomplete.sh BIN: a bundle cut short (a download or a copy that stopped)
# is read as far as it goes: the members complete before the cut are
# analysed, the one it cut keeps its bytes, and the coverage says where
# the bundle broke.
bin=$1
. tests/e2e/lib.sh
sample=fixtures/sample/sample-bundle.tar.gz
# files STATUS...: "path-tail status" of every file of the last run
files() { q "$tmp/o/inquest.db" "SELECT substr(path, length('t.tar.gz!incident-2026-11-30/') + 1) || ' ' || status FROM files ORDER BY id" | tr '\n' ' '; }

# 5000 bytes of the sample: README.txt and deployments.yaml whole, events.json cut
head -c 5000 "$sample" > "$tmp/t.tar.gz"
"$bin" analyze "$tmp/t.tar.gz" -o "$tmp/o" >"$tmp/out" 2>"$tmp/err"
rc=$?
got=$(files)
[ "$got" = "README.txt done cluster/deployments.yaml done cluster/events.json error " ] && ok \
  || { ko "head -c 5000: files '$got' (exit $rc)"; sed 's/^/  /' "$tmp/err"; }
# every byte before the cut: gzip -dc gives 53201 bytes, 7680 of them before events.json's data
n=$(q "$tmp/o/inquest.db" "SELECT bytes FROM files WHERE path LIKE '%events.json'")
[ "${n:-0}" -ge 45500 ] && ok || ko "head -c 5000: events.json kept $n bytes, expected 45521 or more"
n=$(q "$tmp/o/inquest.db" "SELECT count(*) FROM records r JOIN files f ON f.id = r.file_id WHERE f.path LIKE '%deployments.yaml'")
[ "${n:-0}" -gt 0 ] && ok || ko "head -c 5000: no records of deployments.yaml"
m=$(q "$tmp/o/inquest.db" "SELECT message FROM problems WHERE path = 't.tar.gz'"); m=${m#\"}; m=${m%\"}
case $m in
  "truncated gzip input at byte "*" of the archive's data, in or after member incident-2026-11-30/cluster/events.json: the members before it were read, any after it are missing") ok ;;
  *) ko "head -c 5000: the coverage does not say where the bundle broke: '$m'" ;;
esac
grep -q "^inquest: warning: t.tar.gz!incident-2026-11-30/cluster/events.json:[0-9]*: truncated gzip input" "$tmp/err" && ok \
  || { ko "head -c 5000: no warning naming the cut member"; sed 's/^/  /' "$tmp/err"; }

# exit 5: the run did its job on part of the bundle, and said so last
[ $rc -eq 5 ] && ok || ko "head -c 5000: exit $rc, expected 5"
tail -1 "$tmp/err" | grep -q "^inquest: warning: the bundle was not read whole: 2 damaged, truncated or unreadable, 0 cut at a limit" && ok \
  || { ko "head -c 5000: the last line of stderr does not say the bundle was incomplete"; tail -3 "$tmp/err"; }
[ -s "$tmp/o/postmortem.md" ] && [ -s "$tmp/o/findings.json" ] && ok || ko "head -c 5000: no postmortem or findings"
"$bin" ingest "$tmp/t.tar.gz" --db "$tmp/t.db" -q 2>"$tmp/err"; rc=$?
[ $rc -eq 5 ] && ok || ko "ingest of a cut bundle: exit $rc, expected 5"

# --quiet silences the chatter, never that data was lost: a 150 KB prefix
# of the sample loses the cascade's later pods
head -c 150000 "$sample" > "$tmp/t150.tar.gz"
"$bin" analyze "$tmp/t150.tar.gz" -o "$tmp/q" -q >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 5 ] && ok || ko "-q on a cut bundle: exit $rc, expected 5"
[ ! -s "$tmp/out" ] && ok || ko "-q printed on stdout: $(head -2 "$tmp/out")"
grep -q "^inquest: warning: t150.tar.gz: truncated gzip input at byte" "$tmp/err" && ok || { ko "-q hid where the bundle broke"; cat "$tmp/err"; }
grep -q "^inquest: warning: t150.tar.gz!.*: truncated gzip input (read stopped; [0-9]* lines kept)" "$tmp/err" && ok \
  || { ko "-q hid the file cut short"; cat "$tmp/err"; }
grep -q "not read whole" "$tmp/err" && ok || ko "-q hid that the bundle was not read whole"
grep -q "files read" "$tmp/err" && ko "-q printed the summary" || ok
# a whole bundle with -q: nothing at all, exit 0
"$bin" analyze "$sample" -o "$tmp/w" -q >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] && [ ! -s "$tmp/out" ] && [ ! -s "$tmp/err" ] && ok || { ko "-q on the whole sample: exit $rc, output:"; head -3 "$tmp/out" "$tmp/err"; }
# a size limit is data cut: warned with -q, exit 5
"$bin" analyze "$sample" -o "$tmp/l" -q --max-member-bytes 4K >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 5 ] && grep -q "decompressed size over the limit of 4096 bytes: rest not read" "$tmp/err" \
  && grep -q "[1-9][0-9]* cut at a limit" "$tmp/err" && ok || { ko "--max-member-bytes 4K -q: exit $rc"; head -3 "$tmp/err"; }
# --fail-on comes first: the verdict asked about is reached, exit 1
"$bin" analyze "$tmp/t.tar.gz" -o "$tmp/f" -q --fail-on inconclusive >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "not read whole" "$tmp/err" && ok || ko "cut bundle with --fail-on reached: exit $rc, expected 1 and the warning"
"$bin" analyze "$tmp/t.tar.gz" -o "$tmp/f" -q --fail-on confirmed >/dev/null 2>&1; rc=$?
[ $rc -eq 5 ] && ok || ko "cut bundle with --fail-on not reached: exit $rc, expected 5"

echo "incomplete: $pass passed, $fail failed"
[ $fail -eq 0 ]
