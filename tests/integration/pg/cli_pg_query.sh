#!/bin/sh
# Runs `wirekit pg query` against the test server and checks its output byte for byte
# (JSON lines and MessagePack). Exit 77 (skip) without WK_PG_DSN.
set -eu
wirekit=$1
if [ -z "${WK_PG_DSN:-}" ]; then
  echo "skipped: WK_PG_DSN is not set"
  exit 77
fi
out=$("$wirekit" pg query --dsn "$WK_PG_DSN" \
  "SELECT \$1::int + 1 AS n, 1e100::float8 AS f, 0.1::float4 AS f4, 'NaN'::float8 AS nan, \
   12.3400::numeric AS num, NULL AS z, true AS b, '{\"x\": [1, 2.50]}'::jsonb AS j, \
   '{{1,2},{3,NULL}}'::int[] AS arr, '2000-01-01 00:00+05'::timestamptz AS ts, \
   '\\x00ff'::bytea AS by, '1 day -01:00'::interval AS iv FROM generate_series(1, 2)" 41)
want='{"n":42,"f":1e+100,"f4":0.1,"nan":"NaN","num":12.3400,"z":null,"b":true,"j":{"x":[1,2.50]},"arr":[[1,2],[3,null]],"ts":"1999-12-31 19:00:00+00","by":"\\x00ff","iv":"1 day -01:00:00"}'
expected=$(printf '%s\n%s' "$want" "$want")
if [ "$out" != "$expected" ]; then
  echo "json output differs:"; echo "got:  $out"; echo "want: $expected"; exit 1
fi
mp=$("$wirekit" pg query --dsn "$WK_PG_DSN" --format msgpack "SELECT 1 AS a, 0.5::float8 AS f" \
  | od -An -tx1 | tr -d ' \n')
if [ "$mp" != "82a16101a166cb3fe0000000000000" ]; then
  echo "msgpack output differs: $mp"; exit 1
fi
if "$wirekit" pg query --dsn "$WK_PG_DSN" "SELECT 1/0" 2>/dev/null; then
  echo "a failing query must exit non-zero"; exit 1
fi
echo "wirekit pg query: json and msgpack outputs match"
