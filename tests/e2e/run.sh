#!/bin/sh
# run.sh BIN: every end-to-end test of the binary. Each suite prints its own
# "N passed, N failed" line; the last line sums them.
bin=$1
export TZ=UTC LC_ALL=C
status=0
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
exit $status
