#!/usr/bin/env bash
# Builds the threaded tests with ThreadSanitizer (-DWK_TSAN=ON) and runs them: the lock-free
# local tier's unit tests, the PostgreSQL pool and loader under fault (8 threads, a private
# server it starts itself), the Redis feed's tracking test (its own redis-server: the feed's
# thread, a writer and a reader against tracking pushes and a restart), the asynchronous get
# (test_cache_async: the store's I/O thread, the cache's workers and 4 calling threads; its
# shared-server cases need WK_REDIS_URL, its failure cases start their own redis-server), and,
# when the servers
# are set (scripts/test.sh runs this with its servers up), the Redis tier's integration test
# (WK_REDIS_URL) and the pool's tests and the cancel's helper thread (test_pq_cancel,
# test_pq_waits) on the shared server (WK_PG_DSN). Extra arguments go to
# ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(test_cache test_cache_local_mt test_pq_pool_faults test_redis_tracking test_cache_async)
if [[ -n ${WK_REDIS_URL:-} ]]; then
  targets+=(test_cache_redis)
fi
if [[ -n ${WK_PG_DSN:-} ]]; then
  targets+=(test_pq_pool test_pq_cancel test_pq_waits)
fi
cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS=-O1 -DWK_TSAN=ON \
  -DWK_BUILD_BENCH=OFF -DWK_WITH_PQ=ON -DWK_WITH_CXX=OFF >/dev/null
cmake --build build/tsan -j "$(nproc)" --target "${targets[@]}"
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
regex=$(IFS='|'; echo "^(${targets[*]})\$")
args=(--test-dir build/tsan --output-on-failure -j 2 -R "$regex" "$@")
if ! ctest "${args[@]}"; then
  # GCC 12's TSan runtime cannot start under kernels with more mmap randomness than it knows
  # (vm.mmap_rnd_bits > 28); without address randomisation it can.
  grep -q 'unexpected memory mapping' build/tsan/Testing/Temporary/LastTest.log || exit 1
  echo "tsan.sh: again without address randomisation (setarch -R)"
  setarch "$(uname -m)" -R ctest "${args[@]}"
fi
