#!/usr/bin/env bash
# Fuzzes every libFuzzer harness for SECONDS each (default 60) with clang, ASan and UBSan.
# Each harness starts from a copy of its committed seed corpus (fuzz/<module>/corpus/<name>/);
# new interesting inputs stay in build/fuzz-corpus/. A crash stops the run and leaves the
# crashing input in build/fuzz-artifacts/. Not part of the test command (it takes long).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
scripts/deps.sh
CC=clang CXX=clang++ scripts/build.sh build/fuzz -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_FLAGS=-O1 -DWK_FUZZ=ON -DWK_SANITIZE=ON -DWK_BUILD_BENCH=OFF -DWK_WERROR=OFF
mkdir -p build/fuzz-corpus build/fuzz-artifacts
status=0
for bin in build/fuzz/fuzz/*/fuzz_*; do
  case "$bin" in *_replay) continue ;; esac
  [ -x "$bin" ] || continue
  name=${bin##*/fuzz_}
  module=$(basename "$(dirname "$bin")")
  work=build/fuzz-corpus/$name
  mkdir -p "$work"
  cp -n fuzz/"$module"/corpus/"$name"/* "$work"/ 2>/dev/null || true
  # -max_len reaches the largest seed (record_nested_60000 is 720 KB), at least 4096.
  maxlen=$(find "$work" -type f -printf '%s\n' | sort -n | tail -1)
  maxlen=$(( ${maxlen:-0} > 4096 ? maxlen : 4096 ))
  echo "== fuzz $name for ${secs}s (max_len $maxlen) =="
  if ! "$bin" -max_total_time="$secs" -max_len="$maxlen" -print_final_stats=1 \
      -artifact_prefix=build/fuzz-artifacts/"$name"- "$work" 2>build/fuzz-artifacts/"$name".log; then
    echo "fuzz $name: FAILED (see build/fuzz-artifacts/$name.log)"; status=1
  else
    grep -E "stat::number_of_executed_units|cov:" build/fuzz-artifacts/"$name".log | tail -2
  fi
done
exit $status
