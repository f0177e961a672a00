#!/bin/sh
# wirekit cache against Redis across invocations: put, get from another invocation, stats,
# del, get again (not found, exit 1); a value in another --format is reported and kept; a
# deleted id's tombstone is hidden from keys, ttl and stats. Skipped (77) without WK_REDIS_URL.
set -u
w=$1
[ -n "${WK_REDIS_URL:-}" ] || { echo "WK_REDIS_URL is not set"; exit 77; }
ns="wkcli$$"
"$w" cache --redis "$WK_REDIS_URL" --ns "$ns" put 7 '{"a":[true,null,-3]}' || exit 1
got=$("$w" cache --redis "$WK_REDIS_URL" --ns "$ns" get 7) || exit 1
[ "$got" = '{"a":[true,null,-3]}' ] || { echo "get gave: $got"; exit 1; }
"$w" cache --redis "$WK_REDIS_URL" --ns "$ns" stats | grep -q '"redis_keys":1' || exit 1
"$w" cache --redis "$WK_REDIS_URL" --ns "$ns" del 7 || exit 1
"$w" cache --redis "$WK_REDIS_URL" --ns "$ns" get 7 2>/dev/null
[ $? -eq 1 ] || { echo "get after del should exit 1"; exit 1; }
r="--redis $WK_REDIS_URL --ns $ns"
# A value written with another --format (or by another program) is not "not found" and a
# read never deletes it (issue 29): exit 1 with the cause, the key still there.
"$w" cache $r --format json put 8 '{"b":2}' || exit 1
err=$("$w" cache $r get 8 2>&1 >/dev/null)
rc=$?
[ $rc -eq 1 ] || { echo "get of a JSON value as MessagePack: exit $rc"; exit 1; }
echo "$err" | grep -q '^wirekit: 8: cannot decode the stored value as msgpack: ' ||
  { echo "get of a JSON value as MessagePack said: $err"; exit 1; }
got=$("$w" cache $r --format json get 8) || { echo "the undecodable value was deleted by a read"; exit 1; }
[ "$got" = '{"b":2}' ] || { echo "get --format json gave: $got"; exit 1; }
# Options after operands (issue 29).
got=$("$w" cache get 8 $r --format json) || { echo "options after the operation were not read"; exit 1; }
[ "$got" = '{"b":2}' ] || { echo "get 8 --format json gave: $got"; exit 1; }
# A deleted id's tombstone is not a value (issue 29): keys does not list it, ttl and stats do
# not see it.
"$w" cache $r put 50 '{"c":3}' || exit 1
"$w" cache $r del 50 || exit 1
"$w" cache $r --format json del 8 || exit 1
keys=$("$w" cache $r keys) || exit 1
[ -z "$keys" ] || { echo "keys after del lists: $keys"; exit 1; }
out=$("$w" cache $r ttl 50 2>&1)
rc=$?
[ $rc -eq 1 ] && [ "$out" = "wirekit: 50: not found" ] || { echo "ttl after del: exit $rc, $out"; exit 1; }
stats=$("$w" cache $r stats) || exit 1
[ "$stats" = '{"redis_keys":0,"redis_keys_version":0}' ] || { echo "stats after del: $stats"; exit 1; }
"$w" cache $r put 51 '{"d":4}' || exit 1
keys=$("$w" cache $r keys) || exit 1
[ "$keys" = 51 ] || { echo "keys lists: $keys"; exit 1; }
ms=$("$w" cache $r ttl 51) || exit 1
[ "$ms" -gt 1000 ] || { echo "ttl 51: $ms"; exit 1; }
"$w" cache $r del 51 || exit 1
echo "wirekit cache --redis: put/get/stats/del, undecodable values, tombstones as expected"
