# lib.sh: the preamble the end-to-end suites share. A suite sets bin=$1,
# then `. tests/e2e/lib.sh` (suites run from the top of the tree) gives:
#   $tmp      a scratch directory, removed when the suite exits
#   ok        counts a check passed
#   ko MSG    counts a check failed and prints "FAIL: MSG"
#   q DB SQL  the rows of a read-only query, as CSV without the header
# and the suite ends with its own "NAME: $pass passed, $fail failed" line.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass+1)); }
ko() { fail=$((fail+1)); echo "FAIL: $*"; }
q() { "$bin" query --db "$1" --format csv "$2" | tail -n +2; }
