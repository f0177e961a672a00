#!/usr/bin/env bash
# The main job: builds wirekit (Release) and runs every benchmark suite with the C peers.
# Extra arguments go to `wirekit bench` (e.g. --suite msgpack, --json). Needs no server; the
# suites that can use one (pg, cache) say so and skip that part when none is running.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh build/release -DCMAKE_BUILD_TYPE=Release -DWK_BUILD_BENCH=ON
exec build/release/bin/wirekit bench "$@"
