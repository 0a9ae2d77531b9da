#!/bin/sh
# run.sh BIN [COLLECT]: every end-to-end test of the binary. Each suite
# prints its own "N passed, N failed" line. With COLLECT (the Makefile's
# $(O)/tests/collect) the suites run BIN through it, and at the end every
# findings.json an analyze wrote is checked against the schema
# (schema/findings.schema.json).
bin=$1
export TZ=UTC LC_ALL=C
status=0
if [ -n "$2" ]; then
  case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
  IQ_REAL_BIN=$bin
  IQ_COLLECT=$(mktemp -d)
  export IQ_REAL_BIN IQ_COLLECT
  trap 'rm -rf "$IQ_COLLECT"' EXIT
  bin=$2
  case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
fi
sh tests/e2e/parsers.sh "$bin" || status=1
python3 tests/e2e/verbatim.py || status=1
sh tests/e2e/errors.sh "$bin" || status=1
sh tests/e2e/docs.sh "$bin" || status=1
sh tests/e2e/cli.sh "$bin" || status=1
sh tests/e2e/completion.sh "$bin" || status=1
python3 tests/e2e/terminal.py "$bin" || status=1
sh tests/e2e/rules.sh "$bin" || status=1
sh tests/e2e/report.sh "$bin" || status=1
python3 tests/e2e/check_sample.py "$bin" || status=1
python3 tests/e2e/scenarios.py "$bin" || status=1
sh tests/e2e/jobs.sh "$bin" || status=1
python3 tests/e2e/scope.py "$bin" || status=1
sh tests/e2e/copies.sh "$bin" || status=1
sh tests/e2e/recovery.sh "$bin" || status=1
sh tests/e2e/sidecar_kill.sh "$bin" || status=1
sh tests/e2e/ties.sh "$bin" || status=1
sh tests/e2e/ceilings.sh "$bin" || status=1
sh tests/e2e/conditions.sh "$bin" || status=1
sh tests/e2e/window.sh "$bin" || status=1
python3 tests/e2e/edges.py "$bin" || status=1
sh tests/e2e/zones.sh "$bin" || status=1
sh tests/e2e/zeroed.sh "$bin" || status=1
sh tests/e2e/questions.sh "$bin" || status=1
sh tests/e2e/summaries.sh "$bin" || status=1
sh tests/e2e/hostile.sh "$bin" || status=1
sh tests/e2e/oom_frameworks.sh "$bin" || status=1
# the shared corpus of real lines, when ../shared is there (skipped otherwise)
python3 tests/e2e/corpus.py "$bin" || status=1
sh tests/e2e/incomplete.sh "$bin" || status=1
python3 tests/e2e/stories.py "$bin" --devset || status=1
python3 tests/e2e/show.py "$bin" || status=1
python3 tests/e2e/charts.py "$bin" || status=1
python3 tests/e2e/inert.py "$bin" || status=1
python3 tests/e2e/browser.py "$bin" || status=1
if [ -n "$IQ_COLLECT" ]; then
  n=$(ls "$IQ_COLLECT" | wc -l)
  if [ "$n" -lt 20 ]; then
    echo "FAIL: schema: only $n findings.json collected"; status=1
  else
    echo "  schema: checking the $n findings.json the suites wrote"
    python3 tests/tools/schema_check.py schema/findings.schema.json "$IQ_COLLECT" || status=1
  fi
  # no guidance any of them calls for contradicts its answers; nor on the
  # devset bundles, when ../shared is there
  python3 tests/e2e/guidance_check.py --devset "$IQ_REAL_BIN" "$IQ_COLLECT" || status=1
fi
exit $status
