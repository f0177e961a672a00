#!/usr/bin/env bash
# Optional (not part of scripts/test.sh): builds wirekit with ThreadSanitizer and runs the
# cache tests, unit and (when WK_REDIS_URL is set, e.g. after scripts/servers.sh start)
# integration. Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh build/tsan -DCMAKE_BUILD_TYPE=Debug -DWK_BUILD_BENCH=OFF \
  -DCMAKE_C_FLAGS="-fsanitize=thread -O1 -g" -DCMAKE_CXX_FLAGS="-fsanitize=thread -O1 -g" \
  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
ctest --test-dir build/tsan --output-on-failure -j 2 -R 'cache' "$@"
