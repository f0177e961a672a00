#!/bin/sh
# The command used the wrong way round, without a server (issue 29): an output file that is
# the input (by name, through a symbolic link, as standard input, appended to by the shell) is
# refused and left as it was; a named output is replaced whole at the end, keeping its mode
# and its symbolic link, or not at all when the run fails or is killed (no temporary file
# left); options after operands are read and `--` ends them, in every subcommand; unknown
# options are usage errors (exit 2) everywhere; `mime -` reads standard input; messages
# name limits by their number, not by a C macro.
# Usage: cli_hostile.sh WIREKIT WORKDIR
set -u
W=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
D=$2
rm -rf "$D"
mkdir -p "$D"
. "$(dirname "$0")/cli_checks.sh"
cd "$D" || exit 1

# 1. The output is the input.
printf '{"a":1}\n[2,3]\n' >f.json
cp f.json orig.json
ln -s f.json link.json
for args in "f.json f.json" "f.json link.json" "link.json f.json" "- f.json"; do
  # shellcheck disable=SC2086
  "$W" convert --from json --to json $args <f.json >out.txt 2>err.txt
  rc=$?
  [ "$rc" = 1 ] || fail "convert $args exited $rc (want 1)"
  cmp -s f.json orig.json || fail "convert $args changed its input: $(od -c f.json | head -3)"
  grep -q '^wirekit: .* is the input file' err.txt || fail "convert $args said: $(cat err.txt)"
done
"$W" convert --from json --to msgpack f.json >>f.json 2>err.txt &&
  fail "convert f.json >> f.json accepted"
grep -q '^wirekit: standard output is the input file' err.txt || fail "append: $(cat err.txt)"
ok "convert refuses an output that is its input (by name, symbolic link, stdin, >>)"

# 2. A named output is replaced at the end, whole: mode and symbolic link kept.
printf '"old"\n' >target.json
chmod 640 target.json
ln -s target.json tlink.json
"$W" convert --from json --to json f.json tlink.json || fail "convert into a symbolic link"
[ -L tlink.json ] || fail "the symbolic link was replaced by a file"
cmp -s target.json f.json || fail "target: $(cat target.json)"
[ "$(stat -c %a target.json)" = 640 ] || fail "mode $(stat -c %a target.json), want 640"
umask 027
"$W" convert --from json --to msgpack f.json new.mp || fail "convert into a new file"
[ "$(stat -c %a new.mp)" = 640 ] || fail "new file mode $(stat -c %a new.mp) under umask 027"
umask 022
ok "a named output keeps its mode and its symbolic link; a new one follows the umask"

# 3. A failed run leaves the old file as it was (it was emptied, then half-written).
printf '"old"\n' >target.json
printf '{"a":1}\n{"b":tru}\n' >bad.json
"$W" convert --from json --to json bad.json target.json 2>err.txt && fail "bad JSON accepted"
[ "$(cat target.json)" = '"old"' ] || fail "a failed convert left: $(od -c target.json | head -2)"
"$W" convert --from json --to msgpack bad.json target.json 2>err.txt && fail "bad JSON accepted"
[ "$(cat target.json)" = '"old"' ] || fail "a failed convert left: $(od -c target.json | head -2)"
ls -a | grep -q 'wirekit-' && fail "a temporary file is left: $(ls -a)"
ok "a failed convert leaves the old output file as it was, and no temporary file"

# 4. A killed run too: the output waits for input that comes late.
( printf '{"a":2}\n'; sleep 3; printf '{"b":3}\n' ) |
  "$W" convert --from json --to json - target.json 2>err.txt &
pid=$!
sleep 1
kill -TERM "$pid"
wait "$pid"
[ "$(cat target.json)" = '"old"' ] || fail "a killed convert left: $(od -c target.json | head -2)"
ls -a | grep -q 'wirekit-' && fail "a killed convert left a temporary file: $(ls -a)"
ok "a convert killed by SIGTERM leaves the old output file as it was, and no temporary file"

# 5. Options after operands, '--' ends them, unknown options refused: every subcommand.
"$W" convert f.json out.json --from json --to json || fail "convert: options after operands"
cmp -s out.json f.json || fail "convert with options after operands wrote: $(cat out.json)"
"$W" convert --from json --to msgpack f.json v.mp
"$W" inspect v.mp --max-depth 4 >out.txt 2>err.txt || fail "inspect FILE --max-depth: $(cat err.txt)"
grep -q fixmap out.txt || fail "inspect with an option after FILE: $(cat out.txt)"
"$W" inspect v.mp --max-depth 0 >/dev/null 2>err.txt
[ $? = 2 ] || fail "inspect FILE --max-depth 0 was not read"
[ "$("$W" mime 'Text/HTML;Charset=UTF-8' --space)" = 'text/html; charset=UTF-8' ] ||
  fail "mime VALUE --space: $("$W" mime 'Text/HTML;Charset=UTF-8' --space 2>&1)"
"$W" mime -- --json >out.txt 2>err.txt
[ $? = 1 ] && grep -q "invalid media type '--json'" err.txt || fail "mime -- --json: $(cat err.txt)"
for c in "convert --from json --to json" "inspect" "mime text/plain" "cache run" \
         "pg query 'select 1'" "pg copy out 'select 1'" "pg copy in t"; do
  for bad in -c -x --bogus --dsn=x=y; do
    [ "$c $bad" = "pg query 'select 1' --dsn=x=y" ] && continue # a valid DSN value
    [ "$c $bad" = "pg copy out 'select 1' --dsn=x=y" ] && continue
    [ "$c $bad" = "pg copy in t --dsn=x=y" ] && continue
    eval "\"\$W\" $c $bad" </dev/null >out.txt 2>err.txt
    rc=$?
    [ "$rc" = 2 ] || fail "wirekit $c $bad exited $rc (want 2): $(cat err.txt)"
    grep -q "^wirekit [a-z]*: unknown option '$bad'" err.txt ||
      [ "$bad" = --dsn=x=y ] || fail "wirekit $c $bad said: $(cat err.txt)"
  done
done
ok "options after operands are read, '--' ends them, unknown options exit 2 (every subcommand)"

# 6. mime '-' reads the values from standard input, one a line; limits named by number.
printf 'text/plain\r\nTEXT/HTML;A=B\n' | "$W" mime - >out.txt || fail "mime -: $(cat out.txt)"
[ "$(cat out.txt)" = "$(printf 'text/plain\ntext/html;a=B')" ] || fail "mime -: $(cat out.txt)"
params=''
i=0
while [ $i -lt 40 ]; do params="$params;p$i=v"; i=$((i + 1)); done
"$W" mime "text/plain$params" >/dev/null 2>err.txt
grep -q 'WK_' err.txt && fail "a C macro name in a message: $(cat err.txt)"
grep -q 'more than 16 parameters\|more parameters than 16' err.txt || fail "mime: $(cat err.txt)"
ok "mime - reads standard input; a limit is named by its number"

echo "cli_hostile: $checks checks passed"
