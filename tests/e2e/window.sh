#!/bin/sh
# window.sh BIN: the incident window. Inferred from the signals when the run
# has no --since/--until (10 min before the first signal of a pattern that was
# found, 5 min after its last, clipped to the records), given by them
# otherwise; in findings.json, the postmortem's header and `timeline
# --window incident` (bounds included).
bin=$1
. tests/e2e/lib.sh
sample=fixtures/sample/sample-bundle.tar.gz

# win DIR: the incident_window of DIR/findings.json on one line
win() {
  python3 -c '
import json, sys
w = json.load(open(sys.argv[1] + "/findings.json"))["incident_window"]
f, l = w["first_signal"] or {}, w["last_signal"] or {}
print(w["start"], w["end"], w["given"], w["lead_s"], w["tail_s"], f.get("pattern"), f.get("signal"),
      f.get("time"), l.get("signal"), l.get("time"))' "$1"
}
same() { [ "$1" = "$2" ] && ok || ko "$3: got '$1', expected '$2'"; }

"$bin" analyze "$sample" -o "$tmp/a" --quiet || ko "analyze: exit $?"
same "$(win "$tmp/a")" "2026-11-30T14:02:00.206Z 2026-11-30T14:29:21.000Z False 600 300 gpu-oom-cascade gpu-mem-sawtooth 2026-11-30T14:12:00.206Z lb-5xx-surge 2026-11-30T14:24:21.000Z" "inferred window"
grep -qF -- '- **Incident window:** 2026-11-30T14:02:00.206Z – 2026-11-30T14:29:21.000Z (inferred from the signals: the first (`gpu-mem-sawtooth` at 2026-11-30T14:12:00.206Z) less 10 min, to the last (`lb-5xx-surge` at 2026-11-30T14:24:21.000Z) plus 5 min)' "$tmp/a/postmortem.md" && ok || ko "postmortem header lacks the window line"
"$bin" report --db "$tmp/a/inquest.db" --lang tr -o "$tmp/tr.md" || ko "report tr: exit $?"
grep -qF -- '- **Olay aralığı:** 2026-11-30T14:02:00.206Z – 2026-11-30T14:29:21.000Z (sinyallerden çıkarıldı:' "$tmp/tr.md" && ok || ko "Turkish header lacks the window line"

"$bin" report --db "$tmp/a/inquest.db" --format text > "$tmp/a.txt" || ko "report text: exit $?"
grep -qxF '  window     2026-11-30T14:02:00.206Z – 2026-11-30T14:29:21.000Z (inferred from the signals)' "$tmp/a.txt" && ok || ko "text report lacks the window line"
# timeline --window incident: every record inside, both ends reached
"$bin" timeline --db "$tmp/a/inquest.db" --window incident --all --format csv > "$tmp/t.csv" || ko "timeline: exit $?"
"$bin" query --db "$tmp/a/inquest.db" --format csv "SELECT count(*) FROM records WHERE ts BETWEEN 1796047320206000000 AND 1796048961000000000" | tail -1 > "$tmp/n"
rows() { python3 -c 'import csv, sys; print(len(list(csv.reader(open(sys.argv[1])))) - 1)' "$1"; }
same "$(rows "$tmp/t.csv")" "$(cat "$tmp/n")" "timeline --window incident --all rows"
same "$(cat "$tmp/n")" 8461 "records in the window"
same "$(sed -n 2p "$tmp/t.csv" | cut -c1-24)" "2026-11-30T14:02:00.452Z" "first row"
same "$(tail -1 "$tmp/t.csv" | cut -c1-24)" "2026-11-30T14:29:20.956Z" "last row"
# an explicit --since wins over the window's start
"$bin" timeline --db "$tmp/a/inquest.db" --window incident --all --since 2026-11-30T14:20:00Z --format csv > "$tmp/t2.csv"
same "$(sed -n 2p "$tmp/t2.csv" | cut -c1-19)" "2026-11-30T14:20:00" "--since with --window"

# given: the scope of the run, clipped to the records
"$bin" analyze "$sample" -o "$tmp/b" --quiet --since 2026-11-30T14:10:00Z || ko "analyze --since: exit $?"
same "$(win "$tmp/b" | cut -d' ' -f1-5)" "2026-11-30T14:10:00.000Z 2026-11-30T14:32:02.361Z True 0 0" "given window"
grep -qF 'given by --since/--until' "$tmp/b/postmortem.md" && ok || ko "postmortem does not say the window was given"
# the end is included: the window ends on the last record, which is listed
"$bin" timeline --db "$tmp/b/inquest.db" --window incident --all --format csv > "$tmp/t3.csv" || ko "timeline given: exit $?"
same "$(tail -1 "$tmp/t3.csv" | cut -c1-24)" "2026-11-30T14:32:02.361Z" "last row: the end is included"

# nothing found: no window, and timeline says why
printf 'hello\nworld\n' > "$tmp/plain.log"
"$bin" analyze "$tmp/plain.log" -o "$tmp/c" --quiet || ko "analyze plain: exit $?"
same "$(win "$tmp/c" | cut -d' ' -f1-3)" "None None False" "no signal, no window"
"$bin" timeline --db "$tmp/c/inquest.db" --window incident 2>"$tmp/err" >/dev/null
same "$?" 3 "timeline --window incident without a window: exit"
grep -q "no incident window: none: no signal of any pattern" "$tmp/err" && ok || ko "timeline error: $(cat "$tmp/err")"
# a database that was only ingested has no findings
"$bin" ingest "$tmp/plain.log" --db "$tmp/i.db" --quiet
"$bin" timeline --db "$tmp/i.db" --window incident 2>"$tmp/err" >/dev/null
same "$?" 3 "timeline --window incident before detect: exit"
grep -q "needs findings: run 'inquest detect'" "$tmp/err" && ok || ko "timeline error: $(cat "$tmp/err")"
"$bin" timeline --db "$tmp/i.db" --window sometimes >/dev/null 2>&1
same "$?" 2 "--window takes only 'incident'"
echo "window: $pass passed, $fail failed"
[ $fail -eq 0 ]
