#!/usr/bin/env bash
# Soak test of the entity cache against a faulty Redis (issue 11): several processes share a
# private redis-server (port WK_SOAK_PORT, default 57090, in a temp dir) and a source of truth,
# doing random gets, puts and invalidations while Redis is killed, stopped (SIGSTOP), pushed to
# maxmemory and restarted at random. Every answer is checked; the report gives gets/s,
# fallbacks, the slowest get and the wrong/stale counts (exit 1 if any). Not part of the test
# command: it runs for SECONDS (default 600).
#   scripts/soak.sh [SECONDS] [PROCS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
procs=${2:-4}
build=${WK_SOAK_BUILD:-build/test}
if [ ! -f "$build/build.ninja" ] && [ ! -f "$build/Makefile" ]; then
  scripts/build.sh "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$build" -j2 --target wirekit_soak
exec "$build"/tests/soak/wirekit-soak --seconds "$secs" --procs "$procs" --threads 2 \
  --keys 20000 --writes 10 --port "${WK_SOAK_PORT:-57090}"
