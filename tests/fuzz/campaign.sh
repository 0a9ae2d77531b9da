#!/bin/sh
# campaign.sh: a fuzzing session over several targets, one at a time (one
# fuzzer process, niced, so that the machine stays usable), with one log row
# per target: seconds run, executions, final cov: and ft:, crashes found.
#
#   sh tests/fuzz/campaign.sh fuzz_bundle:420 fuzz_rules:360 ...
#
# Needs the targets built (make fuzz-build). Each target runs on its scratch
# corpus (build-fuzz/corpus/<target>/, seeded as `make fuzz` seeds it) and
# the committed one; crash inputs land in tests/fuzz/crashes/<target>/. Rows
# are appended to $CAMPAIGN_LOG (build-fuzz/campaign.tsv); libFuzzer's own
# output is in build-fuzz/<target>.log.
set -u
O=${FUZZ_O:-build-fuzz}
LOG=${CAMPAIGN_LOG:-$O/campaign.tsv}
D=tests/fuzz
[ -f "$LOG" ] || printf 'target\tseconds\texecs\tcov\tft\tcorpus_files\tcrashes\tstatus\n' > "$LOG"

# The seeds of a target's scratch corpus (as fuzz_seed in fuzz.mk).
seed() {
	t=$1 scratch=$O/corpus/$1
	mkdir -p "$scratch" "$D/crashes/$t"
	case $t in
	fuzz_sniff)
		for f in fixtures/lines/*/*.log; do
			[ -f "$f" ] || continue
			{ echo "nodes/n1/var/log/pods/ns_pod_uid/c/0.log"; cat "$f"; } \
				> "$scratch/seed-$(echo "$f" | tr / _)"
		done ;;
	fuzz_rules)
		for f in rules/*.json; do
			case $f in *pack.schema.json) continue ;; esac
			cp "$f" "$scratch/seed-$(basename "$f")"
		done ;;
	fuzz_time|fuzz_bundle) ;;
	*)
		fmt=$(echo "$t" | sed 's/^fuzz_//; s/_/-/g')
		for f in fixtures/lines/"$fmt"/*.log; do
			[ -f "$f" ] && cp "$f" "$scratch/seed-$(basename "$f")"
		done ;;
	esac
}

# The dictionary: the target's own, else the JSON keys for JSON formats.
dict_of() {
	if [ -f "$D/dict/$1.dict" ]; then
		echo "-dict=$D/dict/$1.dict"
		return
	fi
	case $1 in
	fuzz_traefik_json|fuzz_gcp_lb_json|fuzz_journald_json|fuzz_prometheus_json|\
	fuzz_k8s_pods|fuzz_k8s_manifest)
		echo "-dict=$D/dict/json.dict" ;;
	esac
}

for spec in "$@"; do
	t=${spec%%:*} secs=${spec#*:}
	[ -x "$O/$t" ] || { echo "campaign: $O/$t is not built (make fuzz-build)" >&2; exit 2; }
	seed "$t"
	kept=; [ -d "$D/corpus/$t" ] && kept=$D/corpus/$t
	before=$(find "$D/crashes/$t" -type f | wc -l)
	start=$(date +%s)
	echo "== $t (${secs}s)"
	# shellcheck disable=SC2046
	ASAN_OPTIONS=handle_abort=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	nice -n 15 "$O/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 $(dict_of "$t") -artifact_prefix="$D/crashes/$t/" \
		"$O/corpus/$t" $kept > "$O/$t.log" 2>&1
	rc=$?
	ran=$(( $(date +%s) - start ))
	last=$(grep -E '^#[0-9]+[[:space:]].*cov:' "$O/$t.log" | tail -1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$O/$t.log")
	cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
	files=$(find "$O/corpus/$t" -type f | wc -l)
	crashes=$(( $(find "$D/crashes/$t" -type f | wc -l) - before ))
	status=ok; [ $rc -eq 0 ] || status="exit $rc"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$ran" "${execs:-?}" "${cov:-?}" \
		"${ft:-?}" "$files" "$crashes" "$status" | tee -a "$LOG"
done
