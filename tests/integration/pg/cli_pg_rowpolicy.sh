#!/bin/sh
# The row policy end to end through the command (issue 24 items 1 and 2, issue 29 items 9
# and 10), against the test server, in JSON Lines and in MessagePack:
# - a table with a column of every built-in type and an array of each (pg_rowpolicy_table),
#   SQL NULL and JSON null in jsonb and json: `pg query` and `pg copy out` write the same
#   bytes, and both `pg query | pg copy in` and `pg copy out | pg copy in` restore the table
#   (EXCEPT both ways empty; json compared as jsonb, whose value is what is kept), with SQL
#   NULL and JSON null apart;
# - repeated column names get the same keys in query and copy out, and copy in reads them;
# - numbers stay numbers in MessagePack (numeric 2.50 -> float64 2.5, integers as integers);
# - a 100-level nested record comes out as nested objects, in linear time (depth 50 and 100
#   timed: the old text rendering doubled per level); the time is printed;
# - a composite over --max-value-bytes (csv) is named as such, not "output buffer is full";
# - copy out caps a COPY field with --max-value-bytes.
# Needs psql. Exit 77 (skip) without WK_PG_DSN.
set -eu
wirekit=$1
table_sql=$2
if [ -z "${WK_PG_DSN:-}" ]; then
  echo "skipped: WK_PG_DSN is not set"
  exit 77
fi
tmp=${TMPDIR:-/tmp}/wk-cli-rowpolicy.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
psql_() { PGOPTIONS=--client-min-messages=warning psql "$WK_PG_DSN" -X -q -t -A -v ON_ERROR_STOP=1 -c "$1"; }
psql_ "DROP TABLE IF EXISTS wk_rp_src, wk_rp_dst" >/dev/null 2>&1
"$table_sql" wk_rp_src >"$tmp/table.sql"
psql "$WK_PG_DSN" -X -q -v ON_ERROR_STOP=1 -f "$tmp/table.sql" >/dev/null
psql_ "CREATE TABLE wk_rp_dst (LIKE wk_rp_src)"
ncols=$(psql_ "SELECT count(*) FROM pg_attribute WHERE attrelid = 'wk_rp_src'::regclass AND attnum > 0")
[ "$ncols" -gt 140 ] || { echo "the table has only $ncols columns"; exit 1; }
# Each column compared by its type's equality where it has a btree one (numeric 2.5 = 2.50),
# json as jsonb, everything else by its text.
cmp_list=$(psql_ "SELECT string_agg(CASE \
  WHEN t.oid IN ('json'::regtype, 'json[]'::regtype) THEN quote_ident(attname) || '::jsonb' || \
       CASE WHEN t.typelem <> 0 THEN '[]' ELSE '' END || '::text' \
  WHEN EXISTS (SELECT 1 FROM pg_opclass o JOIN pg_am m ON m.oid = o.opcmethod \
       WHERE m.amname = 'btree' AND o.opcdefault AND o.opcintype = \
       CASE WHEN t.typelem <> 0 AND t.typlen = -1 THEN t.typelem ELSE t.oid END) \
       AND t.typname NOT IN ('money', '_money') THEN quote_ident(attname) \
  ELSE quote_ident(attname) || '::text' END, ', ' ORDER BY attnum) \
  FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid \
  WHERE attrelid = 'wk_rp_src'::regclass AND attnum > 0")
same() { # $1: what was copied in
  d1=$(psql_ "SELECT count(*) FROM (SELECT $cmp_list FROM wk_rp_src EXCEPT SELECT $cmp_list FROM wk_rp_dst) x")
  d2=$(psql_ "SELECT count(*) FROM (SELECT $cmp_list FROM wk_rp_dst EXCEPT SELECT $cmp_list FROM wk_rp_src) x")
  n=$(psql_ "SELECT count(*) FROM wk_rp_dst")
  nulls=$(psql_ "SELECT count(*) FILTER (WHERE jn IS NULL) || '/' || \
    count(*) FILTER (WHERE jn = 'null'::jsonb) || '/' || count(*) FILTER (WHERE jt IS NULL) || \
    '/' || count(*) FILTER (WHERE jt::jsonb = 'null'::jsonb) FROM wk_rp_dst")
  [ "$d1/$d2/$n/$nulls" = "0/0/3/1/1/1/1" ] || {
    echo "$1: the table was not restored (src-dst/dst-src/rows/jsonb SQL NULL/jsonb null/json SQL NULL/json null: $d1/$d2/$n/$nulls)"
    exit 1
  }
}
q="SELECT * FROM wk_rp_src ORDER BY id"
for fmt in json msgpack; do
  cfmt=$fmt
  [ "$fmt" = json ] && cfmt=jsonl
  "$wirekit" pg query --format "$fmt" "$q" >"$tmp/q.$fmt"
  "$wirekit" pg copy out --format "$cfmt" "$q" >"$tmp/c.$fmt" 2>/dev/null
  cmp "$tmp/q.$fmt" "$tmp/c.$fmt" || { echo "$fmt: pg copy out differs from pg query"; exit 1; }
  psql_ "TRUNCATE wk_rp_dst"
  "$wirekit" pg copy in --format "$cfmt" wk_rp_dst <"$tmp/q.$fmt" 2>/dev/null
  same "$fmt: pg query | pg copy in"
  psql_ "TRUNCATE wk_rp_dst"
  "$wirekit" pg copy in --format "$cfmt" wk_rp_dst "$tmp/c.$fmt" 2>/dev/null
  same "$fmt: pg copy out | pg copy in"
done
# SQL NULL leaves a json key out, JSON null is null
grep -q '"jn":null,"jt":null}' "$tmp/q.json" || { echo "JSON null in jsonb is not null"; exit 1; }
last=$(tail -n 1 "$tmp/q.json")
case "$last" in *'"jn"'*|*'"jt"'*) echo "SQL NULL in jsonb is not a key left out"; exit 1;; esac
# repeated names: the same keys in query and copy out, and copy in reads them as columns
rq="SELECT 1 AS a, 2 AS a, 3 AS a_2, NULL::jsonb AS a"
[ "$("$wirekit" pg query "$rq")" = '{"a":1,"a_3":2,"a_2":3}' ] || { echo "repeated names"; exit 1; }
[ "$("$wirekit" pg copy out "$rq" 2>/dev/null)" = '{"a":1,"a_3":2,"a_2":3}' ] ||
  { echo "repeated names (copy out)"; exit 1; }
psql_ "DROP TABLE IF EXISTS wk_rp_dup; CREATE TABLE wk_rp_dup (a int, a_2 int, a_3 int, a_4 jsonb)"
"$wirekit" pg query "SELECT 1 AS a, 2 AS a, 3 AS a_2, NULL::jsonb AS a" |
  "$wirekit" pg copy in wk_rp_dup 2>/dev/null
[ "$(psql_ "SELECT a || ',' || a_2 || ',' || a_3 || ',' || (a_4 IS NULL) FROM wk_rp_dup")" = "1,3,2,true" ] ||
  { echo "copy in of repeated names"; exit 1; }
# numbers stay numbers in MessagePack: numeric 2.50 is float64 2.5, jsonb integers integers
got=$("$wirekit" pg query --format msgpack "SELECT 2.50::numeric AS n, 7::numeric AS i, \
  '{\"k\": 10, \"s\": 99.5}'::jsonb AS j, 0.1000000000000000000001 AS x" |
  "$wirekit" convert --from msgpack --to json)
[ "$got" = '{"n":2.5,"i":7,"j":{"k":10,"s":99.5},"x":"0.1000000000000000000001"}' ] ||
  { echo "msgpack numbers: $got"; exit 1; }
# a 100-level nested record as nested objects, in linear time
nested() { # $1 levels
  s="1"; i=0
  while [ $i -lt "$1" ]; do s="row($s, 'x')"; i=$((i + 1)); done
  echo "SELECT $s AS r"
}
ms() { echo $(( $(date +%s%N) / 1000000 )); }
nested 100 >"$tmp/n100.sql"
nested 50 >"$tmp/n50.sql"
t0=$(ms); "$wirekit" pg query --file "$tmp/n50.sql" >"$tmp/n50.json"; t1=$(ms)
"$wirekit" pg query --file "$tmp/n100.sql" >"$tmp/n100.json"; t2=$(ms)
"$wirekit" pg copy out "$(cat "$tmp/n100.sql")" >"$tmp/n100c.json" 2>/dev/null
cmp "$tmp/n100.json" "$tmp/n100c.json" || { echo "100 levels: copy out differs"; exit 1; }
depth=$(tr -cd '{' <"$tmp/n100.json" | wc -c)
[ "$depth" = 101 ] || { echo "100 levels: $depth objects"; exit 1; }
case "$(cat "$tmp/n100.json")" in
  '{"r":{"f1":{"f1":{"f1":'*'"f2":"x"},"f2":"x"}}') ;;
  *) echo "100 levels: not nested objects"; exit 1;;
esac
echo "pg query, 50-level record: $((t1 - t0)) ms; 100-level record: $((t2 - t1)) ms (whole command)"
# linear: 100 levels cost at most 4x 50 levels plus a second of slack (doubling per level
# would be 2^50 times)
[ $((t2 - t1)) -le $((4 * (t1 - t0) + 1000)) ] || { echo "100 levels are not linear"; exit 1; }
# a composite over --max-value-bytes is named as such
set +e
"$wirekit" pg query --format csv --max-value-bytes 50 "SELECT row(repeat('x', 100), 1) AS r" \
  >/dev/null 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 1 ] && grep -q 'larger than --max-value-bytes 50' "$tmp/err" ||
  { echo "composite over the cap: rc $rc"; cat "$tmp/err"; exit 1; }
# copy out: --max-value-bytes caps a COPY field; the rows before it are printed whole
set +e
"$wirekit" pg copy out --max-value-bytes 1000 \
  "SELECT g AS n, repeat('x', CASE WHEN g = 3 THEN 5000 ELSE 10 END) AS t FROM generate_series(1, 4) g" \
  >"$tmp/out" 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 1 ] && grep -q 'row 3' "$tmp/err" && grep -q 'max-value-bytes 1000' "$tmp/err" ||
  { echo "copy out field cap: rc $rc"; cat "$tmp/err"; exit 1; }
[ "$(wc -l <"$tmp/out")" = 2 ] || { echo "copy out: the rows before the cap"; cat "$tmp/out"; exit 1; }
psql_ "DROP TABLE wk_rp_src, wk_rp_dst, wk_rp_dup"
echo "ok"
