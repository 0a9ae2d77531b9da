#!/bin/sh
# docs.sh [--check] BIN: the command reference of docs/inquest.1 and
# README.md is made from the command table: `BIN help --man` and `BIN help
# --markdown` print it as regions between "BEGIN generated: NAME" and "END
# generated" lines, and this script puts each region in place of the one of
# the same name in the file (make docs). With --check it changes nothing and
# shows how the files differ from the table (make test), exit 1 if they do.
check=0
[ "$1" = --check ] && { check=1; shift; }
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# splice FILE GENERATED: FILE with its regions replaced, on stdout
splice() {
  awk -v gen="$2" '
    function region_name(s) { match(s, /BEGIN generated: [a-z]+/); return substr(s, RSTART + 17, RLENGTH - 17) }
    BEGIN {
      cur = ""
      while ((getline line < gen) > 0) {
        if (line ~ /BEGIN generated: /) cur = region_name(line)
        if (cur != "") region[cur] = region[cur] line "\n"
        if (line ~ /END generated/) cur = ""
      }
    }
    /BEGIN generated: / {
      name = region_name($0)
      if (!(name in region)) { print "docs.sh: " FILENAME ": region " name " is not generated" > "/dev/stderr"; bad = 1 }
      printf "%s", region[name]; seen[name] = 1; skip = 1; next
    }
    skip && /END generated/ { skip = 0; next }
    skip { next }
    { print }
    END {
      for (n in region) if (!(n in seen)) { print "docs.sh: " FILENAME " lacks the region " n > "/dev/stderr"; bad = 1 }
      exit bad
    }' "$1"
}
"$bin" help --man > "$tmp/man" || exit 1
"$bin" help --markdown > "$tmp/md" || exit 1
status=0
for pair in "docs/inquest.1 man" "README.md md"; do
  set -- $pair
  splice "$1" "$tmp/$2" > "$tmp/new" || { status=1; continue; }
  if [ $check = 1 ]; then
    diff -u "$1" "$tmp/new" > "$tmp/diff" || { echo "$1 differs from the command table (make docs):"; cat "$tmp/diff"; status=1; }
  elif ! cmp -s "$1" "$tmp/new"; then
    cp "$tmp/new" "$1" && echo "docs.sh: $1 updated"
  fi
done
exit $status
