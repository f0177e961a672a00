#!/bin/sh
# `wirekit pg query` and `pg copy out` throughput, two builds side by side (the row policy's
# 3% budget, issue 24): each repetition runs every case once with each binary, the order of
# the two binaries alternating between repetitions, over the same 200,000-row table of mixed
# types (int8, float8, numeric, text, timestamptz, jsonb, int4[], a composite). Output goes
# to /dev/null; the table prints per case and binary the median, min and max wall time of
# the repetitions, rows/s and output MB/s at the median, and new/old; then the same for the
# CPU time of the wirekit process (user + system, from /usr/bin/time): on a machine shared
# with other work the wall time swings with the load, the client's own CPU time much less,
# and it is the client's work the row policy changes. The machine's load average is printed
# before and after. Needs psql, /usr/bin/time and WK_PG_DSN.
# usage: bench/pg/cli_throughput.sh OLD_WIREKIT NEW_WIREKIT [REPS]
set -eu
old=$1 new=$2 reps=${3:-7}
: "${WK_PG_DSN:?WK_PG_DSN is not set}"
rows=200000
tmp=${TMPDIR:-/tmp}/wk-bench-pgcli.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
PGOPTIONS=--client-min-messages=warning psql "$WK_PG_DSN" -X -q -v ON_ERROR_STOP=1 -c "
  DROP TABLE IF EXISTS wk_bench_cli;
  CREATE TABLE wk_bench_cli AS SELECT i::int8 AS id, i * 1.5::float8 AS f,
    (i / 7.0)::numeric(20,6) AS num, 'name ' || i AS t,
    '2020-01-01 00:00+00'::timestamptz + i * interval '1 s' AS ts,
    jsonb_build_object('k', i, 's', i * 0.5, 'tags', jsonb_build_array('a', 'b')) AS j,
    ARRAY[i, i + 1, NULL]::int4[] AS a, row(i, 'x')::record::text AS rt
    FROM generate_series(1, $rows) i" >/dev/null
q="SELECT id, f, num, t, ts, j, a, row(id, t) AS r FROM wk_bench_cli"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)   cores: $(nproc)   rows: $rows   reps: $reps"
cases="query-json query-msgpack copyout-jsonl copyout-msgpack"
run() { # $1 binary, $2 case -> prints ms and bytes
  case $2 in
    query-json) set -- "$1" pg query --format json "$q" ;;
    query-msgpack) set -- "$1" pg query --format msgpack "$q" ;;
    copyout-jsonl) set -- "$1" pg copy out --format jsonl "$q" ;;
    copyout-msgpack) set -- "$1" pg copy out --format msgpack "$q" ;;
  esac
  t0=$(date +%s%N)
  /usr/bin/time -f "%U %S" -o "$tmp/cpu" "$@" 2>/dev/null >"$tmp/out"
  t1=$(date +%s%N)
  cpu=$(awk '{ printf "%d", ($1 + $2) * 1000 }' "$tmp/cpu")
  echo "$(( (t1 - t0) / 1000000 )) $(wc -c <"$tmp/out") $cpu"
}
r=0
while [ $r -lt "$reps" ]; do
  for c in $cases; do
    if [ $((r % 2)) = 0 ]; then order="old new"; else order="new old"; fi
    for side in $order; do
      bin=$old
      [ "$side" = new ] && bin=$new
      run "$bin" "$c" >>"$tmp/$c.$side"
    done
  done
  r=$((r + 1))
done
# table FIELD TITLE: FIELD 1 = wall ms, 3 = CPU ms of the process
table() {
  echo "$2"
  printf '%-16s %-4s %9s %9s %9s %10s %8s %9s\n' case side median_ms min_ms max_ms rows/s MB/s new/old
  for c in $cases; do
    for side in old new; do
      awk -v f="$1" '{ print $f, $2 }' "$tmp/$c.$side" | sort -n >"$tmp/s"
      n=$(wc -l <"$tmp/s")
      med=$(sed -n "$(( (n + 1) / 2 ))p" "$tmp/s")
      ms=${med%% *} bytes=${med##* }
      [ "$ms" -gt 0 ] || ms=1
      min=$(head -n 1 "$tmp/s" | cut -d' ' -f1)
      max=$(tail -n 1 "$tmp/s" | cut -d' ' -f1)
      eval "med_$side=$ms"
      ratio=""
      [ "$side" = new ] && ratio=$(awk "BEGIN { printf \"%.3f\", $ms / $med_old }")
      awk -v c="$c" -v s="$side" -v ms="$ms" -v mn="$min" -v mx="$max" -v b="$bytes" \
        -v rows="$rows" -v r="$ratio" 'BEGIN { printf "%-16s %-4s %9d %9d %9d %10.0f %8.1f %9s\n",
        c, s, ms, mn, mx, rows / (ms / 1000), b / (ms / 1000) / 1e6, r }'
    done
  done
}
table 1 "wall time of the command (connect, query, output):"
table 3 "CPU time of the wirekit process (user + system):"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
PGOPTIONS=--client-min-messages=warning psql "$WK_PG_DSN" -X -q -c "DROP TABLE wk_bench_cli" >/dev/null
