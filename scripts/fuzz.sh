#!/usr/bin/env bash
# Fuzzes the libFuzzer harnesses for SECONDS each (default 60) with clang, ASan and UBSan:
# every harness, or only the NAMEs given (the part after fuzz_: stream_split json_reader
# schema_decode pg_copy ...; only those are built then).
# usage: scripts/fuzz.sh [SECONDS [NAME...]]
# Each harness starts from a copy of its committed seed corpus (fuzz/<module>/corpus/<name>/);
# new interesting inputs stay in build/fuzz-corpus/. A crash stops the run and leaves the
# crashing input in build/fuzz-artifacts/. Not part of the test command (it takes long).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
case "$secs" in
  ''|*[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS [NAME...]]" >&2; exit 2 ;;
esac
[ $# -gt 0 ] && shift
names=("$@")
scripts/deps.sh
CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_FLAGS=-O1 -DWK_FUZZ=ON -DWK_SANITIZE=ON -DWK_BUILD_BENCH=OFF -DWK_WERROR=OFF \
  >/dev/null
if [ ${#names[@]} -eq 0 ]; then
  cmake --build build/fuzz -j "$(nproc)"
else
  cmake --build build/fuzz -j "$(nproc)" --target "${names[@]/#/fuzz_}"
fi
mkdir -p build/fuzz-corpus build/fuzz-artifacts
status=0
for bin in build/fuzz/fuzz/*/fuzz_*; do
  case "$bin" in *_replay) continue ;; esac
  [ -x "$bin" ] || continue
  name=${bin##*/fuzz_}
  if [ ${#names[@]} -gt 0 ] && [[ " ${names[*]} " != *" $name "* ]]; then
    continue
  fi
  module=$(basename "$(dirname "$bin")")
  work=build/fuzz-corpus/$name
  mkdir -p "$work"
  cp -n fuzz/"$module"/corpus/"$name"/* "$work"/ 2>/dev/null || true
  # -max_len reaches the largest seed (record_nested_60000 is 720 KB), at least 4096.
  maxlen=$(find "$work" -type f -printf '%s\n' | sort -n | tail -1)
  maxlen=$(( ${maxlen:-0} > 4096 ? maxlen : 4096 ))
  echo "== fuzz $name for ${secs}s (max_len $maxlen) =="
  log=build/fuzz-artifacts/"$name".log
  # /usr/bin/time appends the run's CPU seconds (user + system) to the log: the fuzz table's
  # "CPU time" column, which wall time overstates on a shared machine.
  if ! /usr/bin/time -a -o "$log.cpu" -f "%U %S" "$bin" -max_total_time="$secs" \
      -max_len="$maxlen" -print_final_stats=1 -artifact_prefix=build/fuzz-artifacts/"$name"- \
      "$work" 2>"$log"; then
    echo "fuzz $name: FAILED (see $log)"; status=1
  else
    cpu=$(tail -1 "$log.cpu" | awk '{ printf "%.0f", $1 + $2 }')
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -oE "cov: [0-9]+ ft: [0-9]+" "$log" | tail -1)
    echo "fuzz $name: ${cpu} CPU-s, ${execs} executions, $cov"
  fi
done
exit $status
