#!/bin/sh
# zones.sh BIN: zone-less times take the zone the bundle names for their
# node (etc/timezone, timedatectl; detect/zones.c), unless --tz was given.
bin=$1
. tests/e2e/lib.sh
b=$tmp/b/nodes
mkdir -p "$b/gpu-node-1/etc" "$b/gpu-node-1/var/log" "$b/gpu-node-2/var/log" "$b/gpu-node-3/var/log"
xid='kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.'
echo 'Europe/Istanbul' > "$b/gpu-node-1/etc/timezone"
echo "Nov 30 17:12:03 gpu-node-1 $xid" > "$b/gpu-node-1/var/log/kern.log"
echo "Nov 30 17:12:03 gpu-node-2 $xid" > "$b/gpu-node-2/var/log/kern.log"
printf '               Local time: Mon 2026-11-30 09:12:03 EST\n           Universal time: Mon 2026-11-30 14:12:03 UTC\n                Time zone: America/New_York (EST, -0500)\nSystem clock synchronized: yes\n' > "$b/gpu-node-3/timedatectl.txt"
printf 'Jul 15 10:00:00 gpu-node-3 %s\nNov 30 09:12:03 gpu-node-3 %s\n' "$xid" "$xid" > "$b/gpu-node-3/var/log/kern.log"
touch -d 2026-12-01T00:00:00Z "$b"/*/var/log/kern.log

zt() {
  "$bin" query --db "$1" --format csv "SELECT f.node, r.line, r.ts_how,
      strftime('%Y-%m-%dT%H:%M:%S', r.ts / 1000000000, 'unixepoch') FROM records r
      JOIN files f ON f.id = r.file_id WHERE f.path LIKE '%kern.log' ORDER BY f.node, r.line" | tail -n +2 | tr '\n' ' '
}
"$bin" analyze "$tmp/b" -o "$tmp/o" --quiet || ko "analyze: exit $?"
got=$(zt "$tmp/o/inquest.db")
want="gpu-node-1,1,year_inferred,2026-11-30T14:12:03 gpu-node-2,1,year_inferred,2026-11-30T17:12:03 gpu-node-3,1,year_inferred,2026-07-15T14:00:00 gpu-node-3,2,year_inferred,2026-11-30T14:12:03 "
[ "$got" = "$want" ] && ok || ko "zone-less times: got '$got', expected '$want'"
z=$("$bin" query --db "$tmp/o/inquest.db" --format csv "SELECT key || '=' || value FROM meta WHERE key LIKE 'zone %' ORDER BY key" | tail -n +2 | tr '\n' ' ')
want="zone gpu-node-1=Europe/Istanbul from b/nodes/gpu-node-1/etc/timezone:1 zone gpu-node-3=America/New_York from b/nodes/gpu-node-3/timedatectl.txt:3 "
[ "$z" = "$want" ] && ok || ko "meta zones: got '$z', expected '$want'"
f=$("$bin" query --db "$tmp/o/inquest.db" --format csv "SELECT format FROM files WHERE path LIKE '%timezone' OR path LIKE '%timedatectl.txt' ORDER BY path" | tail -n +2 | tr '\n' ' ')
[ "$f" = "timezone timezone " ] && ok || ko "zone files sniffed as: '$f'"
# a second detect moves nothing
"$bin" detect --db "$tmp/o/inquest.db" >/dev/null 2>&1 || ko "detect again: exit $?"
[ "$(zt "$tmp/o/inquest.db")" = "$got" ] && ok || ko "a second detect moved times"
# --tz overrides what the bundle says, even --tz UTC
"$bin" analyze "$tmp/b" -o "$tmp/u" --quiet --tz UTC || ko "analyze --tz UTC: exit $?"
got=$(zt "$tmp/u/inquest.db")
want="gpu-node-1,1,year_inferred,2026-11-30T17:12:03 gpu-node-2,1,year_inferred,2026-11-30T17:12:03 gpu-node-3,1,year_inferred,2026-07-15T10:00:00 gpu-node-3,2,year_inferred,2026-11-30T09:12:03 "
[ "$got" = "$want" ] && ok || ko "--tz UTC: got '$got', expected '$want'"
echo "zones: $pass passed, $fail failed"
[ $fail -eq 0 ]
