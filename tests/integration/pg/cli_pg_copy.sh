#!/bin/sh
# Runs `wirekit pg copy out` against the test server: its JSON lines and MessagePack equal
# what `wirekit pg query` prints for the same rows (the row-at-a-time path), FILE receives the
# rows and stderr the count, and failures exit 1 with the server's message. Exit 77 (skip)
# without WK_PG_DSN.
set -eu
wirekit=$1
if [ -z "${WK_PG_DSN:-}" ]; then
  echo "skipped: WK_PG_DSN is not set"
  exit 77
fi
tmp=${TMPDIR:-/tmp}/wk-cli-pgcopy.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
q="SELECT i AS n, i * 1e100::float8 AS f, 0.1::float4 AS f4, 'NaN'::float8 AS nan, \
   (i / 7.0)::numeric(20,6) AS num, NULL::int AS z, i % 2 = 0 AS b, \
   jsonb_build_object('x', i) AS j, ARRAY[i, NULL] AS arr, \
   '2000-01-01 00:00+05'::timestamptz + i * interval '1 min' AS ts, '\\x00ff'::bytea AS by, \
   '1 day -01:00'::interval AS iv, 'a\"b'||i AS t FROM generate_series(1, 2000) i"
"$wirekit" pg copy out --dsn "$WK_PG_DSN" "$q" "$tmp/copy.jsonl" 2>"$tmp/count"
"$wirekit" pg query --dsn "$WK_PG_DSN" "$q" >"$tmp/query.jsonl"
cmp "$tmp/copy.jsonl" "$tmp/query.jsonl" || { echo "copy out jsonl differs from pg query"; exit 1; }
[ "$(cat "$tmp/count")" = "COPY 2000" ] || { echo "count: $(cat "$tmp/count")"; exit 1; }
"$wirekit" pg copy out --dsn "$WK_PG_DSN" --format msgpack "$q" >"$tmp/copy.mp" 2>/dev/null
"$wirekit" pg query --dsn "$WK_PG_DSN" --format msgpack "$q" >"$tmp/query.mp"
cmp "$tmp/copy.mp" "$tmp/query.mp" || { echo "copy out msgpack differs from pg query"; exit 1; }
# a server error: psql's text, exit 1, no count
set +e
"$wirekit" pg copy out --dsn "$WK_PG_DSN" "SELECT 1/0" >/dev/null 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 1 ] || { echo "a failing copy must exit 1, got $rc"; exit 1; }
[ "$(cat "$tmp/err")" = "ERROR:  division by zero" ] || { echo "error text:"; cat "$tmp/err"; exit 1; }
# a type without a binary output is named
set +e
"$wirekit" pg copy out --dsn "$WK_PG_DSN" "SELECT 'wirekit=r/wirekit'::aclitem AS acl" \
  >/dev/null 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 1 ] && grep -q "acl" "$tmp/err" || { echo "aclitem: rc $rc"; cat "$tmp/err"; exit 1; }
# usage errors exit 2
set +e
"$wirekit" pg copy sideways "SELECT 1" >/dev/null 2>&1; rc=$?
set -e
[ "$rc" = 2 ] || { echo "copy sideways must be a usage error, got $rc"; exit 1; }
echo "ok"
