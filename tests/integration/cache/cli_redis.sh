#!/bin/sh
# wirekit cache against Redis across invocations: put, get from another invocation, stats,
# del, get again (not found, exit 1). Skipped (77) without WK_REDIS_URL.
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
echo "wirekit cache --redis: put/get/stats/del as expected"
