#!/usr/bin/env bash
# Runs every test: builds wirekit twice (optimised, and with ASan+UBSan), starts PostgreSQL
# and Redis on loopback, runs the whole ctest suite on both builds (unit, conformance,
# integration, fuzz-corpus replay, install check, benchmark smoke run), then the cache's
# threaded tests under ThreadSanitizer (scripts/tsan.sh), stops the servers. Extra arguments
# go to ctest (e.g. -R msgpack; the ThreadSanitizer step takes none).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
# Every optional part is required here (ON, not AUTO): a missing dependency fails loudly
# instead of silently skipping its tests.
all=(-DWK_WITH_PQ=ON -DWK_WITH_REDIS=ON -DWK_WITH_CXX=ON -DWK_BUILD_DOCS=ON)
scripts/build.sh build/test -DCMAKE_BUILD_TYPE=RelWithDebInfo "${all[@]}" -DWK_BUILD_BENCH=ON
scripts/build.sh build/asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS=-O1 \
  -DCMAKE_CXX_FLAGS=-O1 -DWK_SANITIZE=ON "${all[@]}" -DWK_BUILD_BENCH=OFF

trap 'scripts/servers.sh stop' EXIT
# Taken into a variable first: `eval "$(...)"` alone would carry on with the servers down and
# every integration test skipped.
servers_env=$(scripts/servers.sh start)
eval "$servers_env"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

echo "== tests, optimised build =="
ctest --test-dir build/test --output-on-failure -j 2 "$@"
echo "== tests, ASan+UBSan build =="
ctest --test-dir build/asan --output-on-failure -j 2 "$@"
echo "== cache tests, ThreadSanitizer build =="
scripts/tsan.sh
