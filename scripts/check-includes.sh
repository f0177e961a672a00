#!/usr/bin/env bash
# Machine-checked module boundaries (docs/design.md, "Modules and their interfaces"): a module
# is a folder (src/<module>/, src/formats/<format>/, src/formats/ itself, addons/<name>/, cli/,
# examples/). A file may include its own module's headers, the public headers (wirekit/...),
# and of another module only a header named *_interface.h, the small internal interface that
# module publishes. cli/ and examples/ use the public API only. No include climbs with "../".
# Tests, benchmarks and fuzz harnesses are white-box and are not checked.
# Prints each offence as file:line and exits 1 when there is any.
set -euo pipefail
cd "$(dirname "$0")/.."

files=$(git ls-files 'src/*.c' 'src/*.h' 'addons/*.c' 'addons/*.h' 'cli/*.c' 'cli/*.h' \
  'examples/*.c' 2>/dev/null || true)
[ -n "$files" ] || { echo "check-includes: no files (not a git checkout?)"; exit 1; }
n=$(echo "$files" | wc -l)
status=0
# One grep over every file gives file:line:include; each is resolved as the compiler does (the
# including file's folder, then src/, then addons/). A bare name found nowhere is a header the
# build generates (cli_commands.h).
while IFS=: read -r f line inc; do
  own=${f%/*}
  why=""
  case "$inc" in
    wirekit/*) continue ;;
    */../*|../*) why="climbs out of its folder with '..'" ;;
    *)
      target=""
      for root in "$own" src addons; do
        if [ -f "$root/$inc" ]; then target="$root/$inc"; break; fi
      done
      if [ -z "$target" ]; then
        case "$inc" in */*) why="names no header of the tree" ;; esac
      elif [ "${target%/*}" != "$own" ]; then
        case "$own" in
          cli|examples) why="is private to ${target%/*}/ (cli/ and examples/ use the public API only)" ;;
          *) case "$target" in
               *_interface.h) ;;
               *) why="is private to ${target%/*}/ (another module may include only its *_interface.h)" ;;
             esac ;;
        esac
      fi
      ;;
  esac
  if [ -n "$why" ]; then
    echo "$f:$line: #include \"$inc\" $why"
    status=1
  fi
done < <(echo "$files" | xargs grep -n -H -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' |
         sed -E 's/^([^:]*):([0-9]+):[^"]*"([^"]*)".*/\1:\2:\3/')
if [ $status = 0 ]; then echo "check-includes: $n files, 1 passed, 0 failed"; fi
exit $status
