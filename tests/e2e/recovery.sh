#!/bin/sh
# recovery.sh BIN: every restart measured from the container's start to
# when Kubernetes marked the pod Ready (the kubelet's readiness line, the
# pod's Ready condition, the first request the ingress routed to it), or
# estimated from the engine's ready line and the readiness probe period,
# never taken as the engine's own "startup complete"; a restart that died
# before it was ready says so. The bundle: tests/e2e/recovery_gen.py.
bin=$1
. tests/e2e/lib.sh

python3 tests/e2e/recovery_gen.py "$tmp/b" || ko "generator failed"
"$bin" analyze "$tmp/b" -o "$tmp/o" --quiet >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 1 ] && ok || ko "analyze: exit $rc: $(cat "$tmp/err")"

python3 - "$tmp/o/findings.json" >"$tmp/got" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = [p for p in d["patterns"] if p["id"] == "gpu-oom-cascade"][0]
for r in p["recovery"]:
    w = r.get("ready_window") or {}
    print(r["pod"], r["restart"], r["started"], r["ready"], r["ready_basis"], r["restart_to_ready_s"],
          r["server_ready"], r["model_load_s"], r["died_before_ready"],
          w.get("earliest"), w.get("latest"), w.get("probe_period_s"), w.get("probe_period_from"),
          len(r["evidence"]))
q = [q for q in p["questions"] if q["id"] == "recovery"][0]
dd = q["data"]
print("spread", dd["spread"], "slowest", dd["slowest"]["pod"], dd["slowest"]["restart"],
      "ready", dd["ready"], "of", dd["restarts"], "estimated", dd["estimated"],
      "died", dd["died_before_ready"], "undetermined", dd["undetermined"])
print(q["answer"])
PY
cat >"$tmp/want" <<'W'
web-0 1 2026-11-30T10:00:00.500Z 2026-11-30T10:00:47.000Z kubelet-readiness 46.5 2026-11-30T10:00:40.000Z 12.5 False None None None None 3
web-1 1 2026-11-30T10:02:00.000Z 2026-11-30T10:03:10.000Z ready-condition 70.0 None None False None None None None 1
web-2 1 2026-11-30T10:10:00.000Z 2026-11-30T10:10:33.000Z estimate-engine-ready-probe 33.0 2026-11-30T10:10:30.000Z None False 2026-11-30T10:10:30.000Z 2026-11-30T10:10:36.000Z 6.0 manifest 1
web-3 1 2026-11-30T10:20:00.000Z None None None None None True None None None None 0
web-3 2 2026-11-30T10:20:30.000Z 2026-11-30T10:21:03.000Z estimate-engine-ready-probe 33.0 2026-11-30T10:21:00.000Z None False 2026-11-30T10:21:00.000Z 2026-11-30T10:21:06.000Z 6.0 manifest 1
web-4 1 2026-11-30T10:30:00.000Z 2026-11-30T10:30:40.000Z lb-first-request 40.0 None None False None None None None 1
spread {'min_s': 33.0, 'median_s': 40.0, 'max_s': 70.0} slowest web-1 1 ready 5 of 6 estimated 2 died 1 undetermined 0
5 of 6 restarts were marked Ready again 33–70 s after the container started (median 40 s); the slowest, web-1 restart 1, took 70 s; restarts were staggered. 2 of these are estimates (the engine's ready line plus half the readiness probe period; nothing in the bundle says when Kubernetes marked them Ready). 1 of the restarts died again before it was ready.
W
if diff "$tmp/want" "$tmp/got" >"$tmp/diff"; then ok; else ko "recovery differs:"; cat "$tmp/diff"; fi

# each cited line stands at its file:line: the kubelet's, the condition's, the engine's
ev=$(python3 - "$tmp/o/findings.json" "$tmp" <<'PY'
import json, sys, os
d = json.load(open(sys.argv[1]))
p = [p for p in d["patterns"] if p["id"] == "gpu-oom-cascade"][0]
bad = 0
n = 0
for r in p["recovery"]:
    for e in r["evidence"]:
        n += 1
        lines = open(os.path.join(sys.argv[2], e["file"]), encoding="utf-8").read().split("\n")
        if e["text"] not in lines[e["line"] - 1]:
            bad += 1
            print("not at", e["file"], e["line"], e["text"], file=sys.stderr)
print(n, bad)
PY
)
[ "$ev" = "7 0" ] && ok || ko "recovery evidence (cited, wrong): $ev"

# the ingress's one 502 after web-4's death is one sample: no clock moved by it
sk=$(q "$tmp/o/inquest.db" "SELECT node || ' ' || status || ' ' || applied_ns FROM clock_skew")
case "$sk" in "node-a corrected"*) ko "node-a corrected on one death: $sk" ;; *) ok ;; esac

# the readiness probe's settings, quoted from the manifest's readinessProbe (not livenessProbe)
pr=$(q "$tmp/o/inquest.db" "SELECT c.key || '=' || c.value || ' @' || qt.line FROM config_settings c JOIN quotes qt ON qt.record_id = c.record_id WHERE c.key LIKE 'readiness%' ORDER BY c.key")
[ "$pr" = "readiness_initial_delay_s=5 @20
readiness_period_s=6 @21" ] && ok || ko "probe settings: $pr"

# the postmortem's timeline names the basis of each ready mark
grep -q 'restart 1 marked Ready 46.5 s after it started (the kubelet.s readiness line)' "$tmp/o/postmortem.md" && ok ||
	ko "postmortem: no kubelet-based ready row"
grep -q 'marked Ready 33.0 s after it started (estimated: ' "$tmp/o/postmortem.md" && ok ||
	ko "postmortem: the estimate is not marked as one"

echo "recovery: $pass passed, $fail failed"
[ $fail -eq 0 ]
