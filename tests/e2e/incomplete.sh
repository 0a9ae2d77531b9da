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

echo "incomplete: $pass passed, $fail failed"
[ $fail -eq 0 ]
