#!/usr/bin/env bash
# Machine-checked style rules (STYLE.md): no banned C functions (sprintf, strcpy, strcat,
# gets, atoi, strtok) in wirekit's own code, and every C file opens with a comment block that
# says what it holds. Prints each offence as file:line and exits 1 when there is any.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
files=$(git ls-files 'src/*.c' 'src/*.h' 'addons/*.c' 'addons/*.h' 'include/*.h' 'cli/*.c' 'cli/*.h' 'tests/*.c' \
  'tests/*.h' 'bench/*.c' 'bench/*.h' 'bench/*.cpp' 'fuzz/*.c' 'examples/*.c' 2>/dev/null || true)
[ -n "$files" ] || { echo "check-style: no files (not a git checkout?)"; exit 1; }
# shellcheck disable=SC2086
if grep -nE '(^|[^_[:alnum:]])(sprintf|vsprintf|strcpy|strcat|gets|atoi|strtok)[[:space:]]*\(' \
    $files; then
  echo "check-style: banned function (use snprintf, memcpy with lengths, strtol...)"
  status=1
fi
for f in $files; do
  first=$(grep -m1 -vE '^[[:space:]]*$' "$f" || true)
  case "$first" in
    /\**|//*) ;;
    *) echo "$f:1: file does not open with a comment saying what it holds"; status=1 ;;
  esac
done
n=$(echo "$files" | wc -l)
if [ $status = 0 ]; then echo "check-style: $n files, 1 passed, 0 failed"; fi
exit $status
