#!/bin/sh
# Runs `wirekit pg copy out` against the test server: its JSON lines and MessagePack equal
# what `wirekit pg query` prints for the same rows (the row-at-a-time path), FILE receives the
# rows and stderr the count, and failures exit 1 with the server's message. `pg copy in` of
# that output gives back an equal table (EXCEPT ALL both ways); bad records are named by line
# and column and nothing is written. Options after operands; FILE replaced whole, or left as
# it was when the copy fails; a failing row leaves no part of it on standard output; copy in
# of a long MessagePack record costs linear CPU time. Needs psql. Exit 77 (skip) without
# WK_PG_DSN.
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
for opt in "--null x" "--rows-as arrays" "--file x.sql"; do
  set +e
  # shellcheck disable=SC2086
  "$wirekit" pg copy out $opt "SELECT 1" >/dev/null 2>&1; rc=$?
  set -e
  [ "$rc" = 2 ] || { echo "pg copy $opt (an option of pg query) must be refused, got $rc"; exit 1; }
done
# copy in: a table out to JSON lines and back equals the original (EXCEPT ALL both ways)
psql_() { psql "$WK_PG_DSN" -X -q -t -A -c "$1"; }
psql_ "DROP TABLE IF EXISTS wk_ci_src, wk_ci_dst, wk_ci_fit" >/dev/null 2>&1
psql_ "CREATE TABLE wk_ci_src AS SELECT i AS id, i * 1.5::float8 AS f, \
  (i / 7.0)::numeric(20,6) AS num, 'a\"b\\' || i AS t, ARRAY[i, NULL] AS a, \
  ARRAY['x y', NULL, 'q\"'] AS ta, jsonb_build_object('k', i, 'l', ARRAY[1.5, NULL]) AS j, \
  date '2020-01-01' + i AS d, i % 2 = 0 AS b, decode('00ff', 'hex') AS by, NULL::int AS z, \
  '2000-01-01 00:00+00'::timestamptz + i * interval '1 s' AS ts \
  FROM generate_series(1, 3000) i; CREATE TABLE wk_ci_dst (LIKE wk_ci_src)" >/dev/null
"$wirekit" pg copy out --dsn "$WK_PG_DSN" "SELECT * FROM wk_ci_src" "$tmp/ci.jsonl" 2>/dev/null
"$wirekit" pg copy in --dsn "$WK_PG_DSN" wk_ci_dst "$tmp/ci.jsonl" 2>"$tmp/count"
[ "$(cat "$tmp/count")" = "COPY 3000" ] || { echo "copy in count: $(cat "$tmp/count")"; exit 1; }
diff1=$(psql_ "SELECT count(*) FROM (SELECT * FROM wk_ci_src EXCEPT ALL SELECT * FROM wk_ci_dst) x")
diff2=$(psql_ "SELECT count(*) FROM (SELECT * FROM wk_ci_dst EXCEPT ALL SELECT * FROM wk_ci_src) x")
[ "$diff1/$diff2" = "0/0" ] || { echo "jsonl round trip differs: $diff1/$diff2"; exit 1; }
# the same through MessagePack (from standard input), the jsonb column included: numbers
# inside jsonb are MessagePack numbers (not strings) and come back as jsonb numbers
psql_ "TRUNCATE wk_ci_dst" >/dev/null
"$wirekit" pg copy out --dsn "$WK_PG_DSN" --format msgpack "SELECT * FROM wk_ci_src" \
  2>/dev/null >"$tmp/ci.mp"
"$wirekit" pg copy in --dsn "$WK_PG_DSN" --format msgpack wk_ci_dst <"$tmp/ci.mp" 2>/dev/null
diff1=$(psql_ "SELECT count(*) FROM (SELECT * FROM wk_ci_src EXCEPT ALL SELECT * FROM wk_ci_dst) x")
diff2=$(psql_ "SELECT count(*) FROM (SELECT * FROM wk_ci_dst EXCEPT ALL SELECT * FROM wk_ci_src) x")
n=$(psql_ "SELECT count(*) FROM wk_ci_dst")
[ "$diff1/$diff2/$n" = "0/0/3000" ] || { echo "msgpack round trip differs: $diff1/$diff2/$n"; exit 1; }
nums=$(psql_ "SELECT count(*) FROM wk_ci_dst WHERE jsonb_typeof(j->'k') = 'number' AND \
  jsonb_typeof(j->'l'->0) = 'number' AND (j->'l'->>0)::numeric = 1.5")
[ "$nums" = 3000 ] || { echo "jsonb numbers after the msgpack round trip: $nums/3000"; exit 1; }
# and in the MessagePack itself: row 1's {"k": 1, "l": [1.5, null]} holds an integer and a
# float64, no string
"$wirekit" pg copy out --dsn "$WK_PG_DSN" --format msgpack \
  "SELECT j FROM wk_ci_src WHERE id = 1" "$tmp/j.mp" 2>/dev/null
"$wirekit" inspect "$tmp/j.mp" >"$tmp/j.txt"
grep -q 'positive fixint *value 1$' "$tmp/j.txt" && grep -q 'float 64 *1.5$' "$tmp/j.txt" &&
  ! grep -q '"1.5"' "$tmp/j.txt" || { echo "jsonb numbers in msgpack:"; cat "$tmp/j.txt"; exit 1; }
# a value that does not fit its column, an unknown column, malformed JSON: named, nothing written
psql_ "CREATE TABLE wk_ci_fit (n int8, s int2)" >/dev/null
# refused WHAT RECORDS PATTERN: pg copy in of RECORDS exits 1 with PATTERN on stderr
refused() {
  printf '%b' "$2" >"$tmp/bad.jsonl"
  set +e
  "$wirekit" pg copy in --dsn "$WK_PG_DSN" wk_ci_fit "$tmp/bad.jsonl" 2>"$tmp/err"; rc=$?
  set -e
  [ "$rc" = 1 ] && grep -q "$3" "$tmp/err" || { echo "$1: rc $rc"; cat "$tmp/err"; exit 1; }
}
refused "a value that does not fit" '{"n":1,"s":2}\n{"n":2,"s":40000}\n' 'bad.jsonl:2: column "s"'
refused "an unknown key" '{"n":1,"s":2}\n{"n":2,"nope":3}\n' 'bad.jsonl:2: column "nope"'
refused "malformed JSON" '{"n":1,"s":2}\n{"n":2,\n' 'bad.jsonl:2:'
[ "$(psql_ "SELECT count(*) FROM wk_ci_fit")" = 0 ] || { echo "rows were written"; exit 1; }
psql_ "DROP TABLE wk_ci_src, wk_ci_dst, wk_ci_fit" >/dev/null

# Issue 29. Options after operands: `copy out QUERY --format jsonl FILE`.
"$wirekit" pg copy out "SELECT 1 AS a" --format jsonl "$tmp/opt.jsonl" --dsn "$WK_PG_DSN" 2>/dev/null
[ "$(cat "$tmp/opt.jsonl")" = '{"a":1}' ] || { echo "copy out with options after QUERY: $(cat "$tmp/opt.jsonl")"; exit 1; }
set +e
"$wirekit" pg copy out --dsn "$WK_PG_DSN" "SELECT 1" -c >/dev/null 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 2 ] && grep -q "unknown option '-c'" "$tmp/err" || { echo "copy out -c: rc $rc $(cat "$tmp/err")"; exit 1; }
# FILE is replaced whole at the end: a copy that fails leaves the old FILE as it was; one
# that succeeds keeps its mode.
rows="SELECT g, CASE WHEN g = 3 THEN numrange(0, 1e100) ELSE numrange(0, 1) END AS v
      FROM generate_series(1, 5) g"
printf 'old\n' >"$tmp/keep.jsonl"
chmod 600 "$tmp/keep.jsonl"
set +e
"$wirekit" pg copy out --dsn "$WK_PG_DSN" --max-value-bytes 60 "$rows" "$tmp/keep.jsonl" 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 1 ] && grep -q '^wirekit: row 3: ' "$tmp/err" || { echo "copy out of a bad row: rc $rc $(cat "$tmp/err")"; exit 1; }
[ "$(cat "$tmp/keep.jsonl")" = old ] || { echo "a failed copy out left: $(cat "$tmp/keep.jsonl")"; exit 1; }
set +e # a server error after some rows
"$wirekit" pg copy out --dsn "$WK_PG_DSN" "SELECT g, 1 / (3 - g) AS q FROM generate_series(1, 5) g" \
  "$tmp/keep.jsonl" 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 1 ] && grep -q 'division by zero' "$tmp/err" || { echo "copy out, server error: rc $rc $(cat "$tmp/err")"; exit 1; }
[ "$(cat "$tmp/keep.jsonl")" = old ] || { echo "a copy out the server failed left: $(cat "$tmp/keep.jsonl")"; exit 1; }
"$wirekit" pg copy out --dsn "$WK_PG_DSN" "$rows" "$tmp/keep.jsonl" 2>/dev/null
[ "$(wc -l <"$tmp/keep.jsonl")" = 5 ] && [ "$(stat -c %a "$tmp/keep.jsonl")" = 600 ] ||
  { echo "copy out into an old FILE: $(stat -c %a "$tmp/keep.jsonl") $(cat "$tmp/keep.jsonl")"; exit 1; }
ls -a "$tmp" | grep -q wirekit- && { echo "a temporary file is left: $(ls -a "$tmp")"; exit 1; }
# On standard output a failing row leaves nothing of itself: the rows before it, whole.
for f in jsonl msgpack; do
  set +e
  "$wirekit" pg copy out --dsn "$WK_PG_DSN" --format $f --max-value-bytes 60 "$rows" >"$tmp/half" 2>/dev/null
  set -e
  "$wirekit" pg copy out --dsn "$WK_PG_DSN" --format $f "$rows WHERE g < 3" >"$tmp/whole" 2>/dev/null
  cmp -s "$tmp/half" "$tmp/whole" || { echo "$f: output before a failing row: $(od -c "$tmp/half" | tail -3)"; exit 1; }
done
# A COPY stream that the server breaks off (an error after 40,000 rows, past the 64 KiB
# flush; the backend terminated after 3): every row before it is on standard output, whole,
# the error on stderr, exit 1.
for f in jsonl msgpack; do
  set +e
  "$wirekit" pg copy out --dsn "$WK_PG_DSN" --format $f \
    "SELECT g, 'r' || g AS t, 1 / (40001 - g) AS q FROM generate_series(1, 50000) g" \
    >"$tmp/cut" 2>"$tmp/err"; rc=$?
  set -e
  [ "$rc" = 1 ] && grep -q 'division by zero' "$tmp/err" || { echo "$f: a stream cut by an error: rc $rc $(cat "$tmp/err")"; exit 1; }
  "$wirekit" pg copy out --dsn "$WK_PG_DSN" --format $f \
    "SELECT g, 'r' || g AS t, 1 / (40001 - g) AS q FROM generate_series(1, 40000) g" \
    >"$tmp/whole" 2>/dev/null
  cmp -s "$tmp/cut" "$tmp/whole" || { echo "$f: the rows before a stream error: $(wc -c <"$tmp/cut") of $(wc -c <"$tmp/whole") bytes"; exit 1; }
done
set +e
"$wirekit" pg copy out --dsn "$WK_PG_DSN" "SELECT g, CASE WHEN g = 3 THEN \
  pg_terminate_backend(pg_backend_pid()) END AS k FROM generate_series(1, 5) g" >"$tmp/cut" 2>"$tmp/err"; rc=$?
set -e
[ "$rc" != 0 ] && grep -q 'terminating connection' "$tmp/err" || { echo "a terminated COPY: rc $rc $(cat "$tmp/err")"; exit 1; }
[ "$(tail -c 1 "$tmp/cut" | od -An -tx1 | tr -d ' ')" = 0a ] &&
  [ "$(head -n 2 "$tmp/cut")" = "$(printf '{"g":1,"k":null}\n{"g":2,"k":null}')" ] ||
  { echo "a terminated COPY printed: $(cat "$tmp/cut")"; exit 1; }
# A long MessagePack record costs linear time in copy in: 4 times the elements take about 4
# times the CPU (each chunk decoded the whole record so far again: 12.7 times before the fix),
# checked with a generous bound on the command's user time. The record ({"a": [[1], [1],
# ...]}, 1 MB and 4 MB) is made by wirekit convert.
if [ -x /usr/bin/time ]; then
  psql_ "DROP TABLE IF EXISTS wk_ci_long; CREATE TABLE wk_ci_long (a int[])" >/dev/null 2>&1
  for n in 500000 2000000; do
    { printf '{"a":['; yes '[1],' | head -n $((n - 1)) | tr -d '\n'; printf '[1]]}'; } |
      "$wirekit" convert --from json --to msgpack >"$tmp/long$n.mp"
    /usr/bin/time -f %U -o "$tmp/cpu$n" "$wirekit" pg copy in --dsn "$WK_PG_DSN" --format msgpack \
      wk_ci_long "$tmp/long$n.mp" 2>/dev/null
  done
  [ "$(psql_ "SELECT sum(array_length(a, 1)) FROM wk_ci_long")" = 2500000 ] ||
    { echo "long records: $(psql_ "SELECT array_length(a, 1) FROM wk_ci_long")"; exit 1; }
  small=$(cat "$tmp/cpu500000") large=$(cat "$tmp/cpu2000000")
  awk -v s="$small" -v l="$large" 'BEGIN { exit !(l <= 8 * (s < 0.05 ? 0.05 : s)) }' ||
    { echo "copy in of a 4 times longer record took $large s of CPU against $small s"; exit 1; }
  psql_ "DROP TABLE wk_ci_long" >/dev/null
else
  echo "skipped the long-record timing: /usr/bin/time is missing"
fi
echo "ok"
