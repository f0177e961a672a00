#!/bin/sh
# Runs `wirekit pg query` against the test server and checks its output byte for byte
# (JSON lines and MessagePack); options anywhere before '--', unknown options refused, SQL
# from standard input or --file; a row that fails leaves no part of it on stdout. Exit 77
# (skip) without WK_PG_DSN.
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
tmp=${TMPDIR:-/tmp}/wk-cli-pg.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

# A server error prints as psql prints it and exits 1.
set +e
"$wirekit" pg query --dsn "$WK_PG_DSN" "SELECT 1/0" >/dev/null 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 1 ] || { echo "a failing query must exit 1, got $rc"; exit 1; }
[ "$(cat "$tmp/err")" = "ERROR:  division by zero" ] || { echo "error text:"; cat "$tmp/err"; exit 1; }
set +e
"$wirekit" pg query --dsn "$WK_PG_DSN" "SELECT 1,
  2 FROM FROM" >/dev/null 2>"$tmp/err"
set -e
printf 'ERROR:  syntax error at or near "FROM"\nLINE 2:   2 FROM FROM\n                 ^\n' > "$tmp/want"
cmp -s "$tmp/err" "$tmp/want" || { echo "syntax error text:"; cat "$tmp/err"; exit 1; }

# A connection failure exits 2, as psql.
set +e
"$wirekit" pg query --dsn "host=127.0.0.1 port=1 connect_timeout=5" "SELECT 1" >/dev/null 2>&1
rc=$?
set -e
[ "$rc" = 2 ] || { echo "a connection failure must exit 2, got $rc"; exit 1; }

# Several statements, command tags (stderr for JSON), NULL parameters, duplicate names,
# SQL NULL vs JSON null, rows as arrays.
out=$("$wirekit" pg query --dsn "$WK_PG_DSN" "CREATE TEMP TABLE t (a int); INSERT INTO t VALUES (1), (2);
  SELECT a, a AS a, NULL::jsonb AS j, 'null'::jsonb AS k FROM t ORDER BY a" 2>"$tmp/tags")
want='{"a":1,"a_2":1,"k":null}
{"a":2,"a_2":2,"k":null}'
[ "$out" = "$want" ] || { echo "multi-statement output: $out"; exit 1; }
[ "$(cat "$tmp/tags")" = "CREATE TABLE
INSERT 0 2" ] || { echo "command tags:"; cat "$tmp/tags"; exit 1; }
out=$("$wirekit" pg query --dsn "$WK_PG_DSN" --null '\N' --rows-as arrays \
  'SELECT $1::int IS NULL, $2::text, NULL::json, $3::json' '\N' 'x' 'null')
[ "$out" = '[true,"x",null,"null"]' ] || { echo "arrays/--null output: $out"; exit 1; }

# No --dsn: the libpq environment, here a service file naming the test server.
{ echo "[wk_test]"; for kv in $WK_PG_DSN; do echo "$kv"; done; } > "$tmp/pg_service.conf"
out=$(env -u WK_PG_DSN PGSERVICEFILE="$tmp/pg_service.conf" PGSERVICE=wk_test \
  "$wirekit" pg query 'SELECT current_database() AS db')
[ "$out" = '{"db":"postgres"}' ] || { echo "service-file connection: $out"; exit 1; }

# CSV byte-identical to psql --csv (when psql is installed).
if command -v psql >/dev/null 2>&1; then
  q="CREATE TEMP TABLE c (a int, b text); INSERT INTO c VALUES (1, 'x,y'), (2, NULL), (3, ''),
     (4, E'a\"b\nc'), (5, '\\.'); SELECT a, b, b AS a, a > 2 AS big, 0.1::float8 AS f,
     '(1,2)'::point AS p, int4range(a, 9) AS r, 'wirekit=r/wirekit'::aclitem AS acl,
     array[b, NULL] AS arr, '{\"k\": [1, null]}'::jsonb AS j FROM c ORDER BY 1;
     UPDATE c SET a = a; SELECT 1 WHERE false"
  "$wirekit" pg query --dsn "$WK_PG_DSN" --format csv "$q" > "$tmp/wk.csv"
  psql "$WK_PG_DSN" -X --csv -c "$q" > "$tmp/psql.csv"
  cmp "$tmp/wk.csv" "$tmp/psql.csv" || { diff "$tmp/wk.csv" "$tmp/psql.csv"; exit 1; }
fi
# Issue 29. Options after operands are read, '--' ends them; unknown options are refused
# (exit 2), never sent as SQL or parameters.
out=$("$wirekit" pg query 'SELECT $1::int AS n' 5 --format csv --dsn "$WK_PG_DSN")
[ "$out" = "$(printf 'n\n5')" ] || { echo "options after operands: $out"; exit 1; }
out=$("$wirekit" pg query --dsn "$WK_PG_DSN" 'SELECT $1::text AS t' -- --format)
[ "$out" = '{"t":"--format"}' ] || { echo "a parameter after --: $out"; exit 1; }
out=$("$wirekit" pg query --dsn "$WK_PG_DSN" 'SELECT $1::int AS n' -- -1)
[ "$out" = '{"n":-1}' ] || { echo "a negative parameter after --: $out"; exit 1; }
for bad in "-c" "--bogus" "-x"; do
  set +e
  "$wirekit" pg query --dsn "$WK_PG_DSN" $bad 'select 1' >"$tmp/out" 2>"$tmp/err"; rc=$?
  set -e
  [ "$rc" = 2 ] && grep -q "^wirekit pg: unknown option '$bad'" "$tmp/err" ||
    { echo "pg query $bad: exit $rc, $(cat "$tmp/err")"; exit 1; }
  [ -s "$tmp/out" ] && { echo "pg query $bad printed: $(cat "$tmp/out")"; exit 1; }
done
# SQL from standard input ('-') or a file (--file FILE, -f FILE), as psql -f.
out=$(printf 'SELECT 1 AS a;\nSELECT 2 AS b\n' | "$wirekit" pg query --dsn "$WK_PG_DSN" -)
[ "$out" = "$(printf '{"a":1}\n{"b":2}')" ] || { echo "SQL from standard input: $out"; exit 1; }
printf 'SELECT $1::int * 2 AS d' > "$tmp/q.sql"
out=$("$wirekit" pg query --dsn "$WK_PG_DSN" --file "$tmp/q.sql" 21)
[ "$out" = '{"d":42}' ] || { echo "SQL from --file: $out"; exit 1; }
out=$("$wirekit" pg query --dsn "$WK_PG_DSN" 21 -f "$tmp/q.sql" --format csv)
[ "$out" = "$(printf 'd\n42')" ] || { echo "SQL from -f: $out"; exit 1; }

# A row whose value cannot be printed leaves nothing of itself on stdout, in every format:
# the rows before it whole, then the error (a range rendered past --max-value-bytes; a date before
# what the decoder takes).
rows="SELECT g, CASE WHEN g = 3 THEN numrange(0, 1e100) ELSE numrange(0, 1) END AS v
      FROM generate_series(1, 5) g"
for f in json msgpack csv; do
  set +e
  "$wirekit" pg query --dsn "$WK_PG_DSN" --format $f --max-value-bytes 60 "$rows" \
    >"$tmp/half" 2>"$tmp/err"; rc=$?
  "$wirekit" pg query --dsn "$WK_PG_DSN" --format $f "$rows WHERE g < 3" >"$tmp/whole" 2>/dev/null
  set -e
  [ "$rc" = 1 ] || { echo "$f: a row over --max-value-bytes: exit $rc"; exit 1; }
  cmp -s "$tmp/half" "$tmp/whole" ||
    { echo "$f: output before the failing row: $(od -c "$tmp/half" | tail -4)"; exit 1; }
  grep -q '^wirekit: row 3: ' "$tmp/err" || { echo "$f: error: $(cat "$tmp/err")"; exit 1; }
done
set +e
"$wirekit" pg query --dsn "$WK_PG_DSN" "SELECT '4714-11-24 BC'::date AS v" >"$tmp/half" 2>"$tmp/err"
rc=$?
set -e
if [ "$rc" != 0 ]; then
  [ ! -s "$tmp/half" ] || { echo "a date that fails printed: $(od -c "$tmp/half")"; exit 1; }
fi
# A whole-row reference in a multi-statement string (the simple protocol, text results) is a
# nested object as in one statement (extended, binary), though the catalog read at connect
# left the table's row type out: in JSON, in MessagePack, and in an array of rows.
psql "$WK_PG_DSN" -X -q -c "DROP TABLE IF EXISTS wk_cq_row" -c "CREATE TABLE wk_cq_row \
  (a int, b text, c int[]); INSERT INTO wk_cq_row VALUES (1, 'x y', '{1,2}')" >/dev/null 2>&1
for f in json msgpack; do
  "$wirekit" pg query --dsn "$WK_PG_DSN" --format $f \
    "SELECT 1 AS n; SELECT t, ARRAY[t] AS ts FROM wk_cq_row t" >"$tmp/simple"
  { "$wirekit" pg query --dsn "$WK_PG_DSN" --format $f "SELECT 1 AS n"
    "$wirekit" pg query --dsn "$WK_PG_DSN" --format $f "SELECT t, ARRAY[t] AS ts FROM wk_cq_row t"
  } >"$tmp/extended"
  cmp -s "$tmp/simple" "$tmp/extended" ||
    { echo "$f: a whole-row reference in the simple protocol: $(od -c "$tmp/simple" | head -5)"; exit 1; }
done
last=$("$wirekit" pg query --dsn "$WK_PG_DSN" "SELECT 1 AS n; SELECT t FROM wk_cq_row t" | tail -n 1)
[ "$last" = '{"t":{"a":1,"b":"x y","c":[1,2]}}' ] ||
  { echo "a whole-row reference is not a nested object"; exit 1; }
psql "$WK_PG_DSN" -X -q -c "DROP TABLE wk_cq_row" >/dev/null 2>&1
echo "wirekit pg query: json, msgpack and csv outputs, errors and exit statuses match"
