# Sourced by the stream CLI tests (cli_stream.sh, cli_stream_edges.sh): how a check passes or
# fails, and the clock the pause checks read. The sourcing script prints the count at the end.
fail() { echo "FAIL: $*" >&2; exit 1; }
checks=0
ok() { checks=$((checks + 1)); echo "ok   $*"; }
now_ms() { date +%s%3N; }
