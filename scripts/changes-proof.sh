#!/usr/bin/env bash
# The long proofs of the change stream, kept out of the default test run because they take
# many minutes on a small machine: the consumer SIGKILLed 20 times during a write load (ctest
# does 5) and a 10,000,000-row transaction through `wirekit pg changes` under the 32 MiB
# resident-memory cap (ctest does 1,000,000). The test starts its own PostgreSQL.
#   scripts/changes-proof.sh [BUILD_DIR]     (default build/release; build it first)
# Environment: WK_CHANGES_KILLS (20), WK_CHANGES_ROWS (10000000).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build/release}
test=$dir/tests/integration/changes/test_pq_changes_faults
[ -x "$test" ] || { echo "changes-proof: build $test first" >&2; exit 2; }
export WK_CLI=$dir/bin/wirekit
export WK_CHANGES_KILLS=${WK_CHANGES_KILLS:-20}
export WK_CHANGES_ROWS=${WK_CHANGES_ROWS:-10000000}
"$test"
