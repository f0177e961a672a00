#!/bin/sh
# `wirekit convert` and `wirekit inspect` at the edges a jq or msgpack-tools user meets, on
# small generated inputs (about 10 s): the first value's output before a pause in the input
# ends, for the two pairs cli_stream.sh does not time (JSON -> MessagePack, MessagePack ->
# JSON) and for a JSON value cut by the pause, whose output comes whole (and not at all when
# the value is bad); output that cannot be written (/dev/full) is an error with exit 1 for every command
# and pair, never a silent success; a missing file and a directory are named; a closed pipe
# ends the command quietly by SIGPIPE, as it ends cat; a value past --max-value names the cap
# and the option; a truncated MessagePack stream names the input and the offset; the progress
# line (on a pty, under `script`) shows bytes, percent, MB/s and ETA, ends with a newline, is
# not shown by default when the output goes to the terminal too, and leaves the output as it
# is without it.
# Usage: cli_stream_edges.sh WIREKIT WORKDIR
set -eu
W=$1
D=$2
mkdir -p "$D"
. "$(dirname "$0")/cli_checks.sh"

# 1. First output before the end of input (the producer pauses 2 s; the line must come in 1 s).
start=$(now_ms)
first=$( (printf '{"a":1}\n'; sleep 2; printf '[2]\n') |
  "$W" convert --from=json --to=msgpack | "$W" inspect |
  { IFS= read -r hdr; IFS= read -r line; echo "$line|$(now_ms)"; cat >/dev/null; })
t=${first##*|}
case "${first%|*}" in 0*fixmap*) ;; *) fail "JSON -> MessagePack first line '${first%|*}'";; esac
[ $((t - start)) -lt 1000 ] || fail "JSON -> MessagePack: first value after $((t - start)) ms"
ok "JSON -> MessagePack: first value after $((t - start)) ms while the input pauses 2 s"

start=$(now_ms)
first=$( (printf '\201\241a\001'; sleep 2; printf '\300') |
  "$W" convert --from msgpack --to json | { IFS= read -r line; echo "$line|$(now_ms)"; cat >/dev/null; })
t=${first##*|}
[ "${first%|*}" = '{"a":1}' ] || fail "MessagePack -> JSON first line '${first%|*}'"
[ $((t - start)) -lt 1000 ] || fail "MessagePack -> JSON: first line after $((t - start)) ms"
ok "MessagePack -> JSON: first line after $((t - start)) ms while the input pauses 2 s"

# A value cut by the pause (JSON -> JSON writes its events as they come): the line before it
# is out at once, the value whole after the pause; a value that turns out bad leaves no half
# of it in the output, cut by a pause or not.
start=$(now_ms)
out=$( (printf '{"a":1}\n{"b":[1,'; sleep 2; printf '2]}\n') | "$W" convert --from=json --to=json |
  { IFS= read -r l1; t=$(now_ms); IFS= read -r l2; echo "$l1|$l2|$t"; })
t=${out##*|}
[ "${out%|*}" = '{"a":1}|{"b":[1,2]}' ] || fail "a value cut by a pause: '${out%|*}'"
[ $((t - start)) -lt 1000 ] || fail "the line before a cut value after $((t - start)) ms"
for cut in 0 1; do
  (printf '{"a":1}\n{"b":'; [ $cut = 0 ] || sleep 1; printf 'tru}\n') |
    "$W" convert --from=json --to=json >"$D/half.json" 2>"$D/err.txt" && fail "bad JSON accepted"
  [ "$(od -An -c "$D/half.json" | tr -d ' ')" = '{"a":1}\n' ] ||
    fail "output before a bad value (cut by a pause: $cut): $(od -An -c "$D/half.json")"
  grep -q '^wirekit: standard input:2:6: cannot reformat JSON: invalid literal (at byte 13)$' "$D/err.txt" ||
    fail "error: $(cat "$D/err.txt")"
done
ok "JSON -> JSON: a value cut by a pause comes whole, a bad one leaves no half line"

# 2. Output that cannot be written: exit 1 and the cause, for every command and pair.
printf '{"a":[1,2,3]}\n' >"$D/v.json"
"$W" convert --from=json --to=msgpack "$D/v.json" "$D/v.mp"
full() { # full WHAT ARGS...: wirekit ARGS >/dev/full must fail with ENOSPC named
  what=$1
  shift
  if "$W" "$@" >/dev/full 2>"$D/err.txt"; then
    fail "$what into /dev/full exited 0"
  fi
  grep -q 'cannot write standard output: No space left on device' "$D/err.txt" ||
    fail "$what into /dev/full: $(cat "$D/err.txt")"
}
full "JSON -> MessagePack" convert --from=json --to=msgpack "$D/v.json"
full "JSON -> JSON" convert --from=json --to=json "$D/v.json"
full "MessagePack -> JSON" convert --from=msgpack --to=json "$D/v.mp"
full "MessagePack -> MessagePack" convert --from=msgpack --to=msgpack "$D/v.mp"
full "convert --check" convert --from=json --check "$D/v.json"
full "inspect" inspect "$D/v.mp"
yes '{"a":[1,2,3]}' | head -n 200000 >"$D/many.json"
"$W" convert --from=json --to=msgpack "$D/many.json" "$D/many.mp"
full "inspect of 200000 values" inspect "$D/many.mp"
ok "output into /dev/full: exit 1 with the cause, for convert (4 pairs, --check) and inspect"

# 3. Inputs that cannot be read are named; a closed pipe ends the command as it ends cat.
for a in "convert --from=json --to=msgpack" "inspect"; do
  # shellcheck disable=SC2086
  if "$W" $a "$D/no-such-file" >/dev/null 2>"$D/err.txt"; then fail "$a of a missing file exited 0"; fi
  grep -q "cannot open $D/no-such-file: No such file or directory" "$D/err.txt" || fail "$a: $(cat "$D/err.txt")"
  # shellcheck disable=SC2086
  if "$W" $a "$D" >/dev/null 2>"$D/err.txt"; then fail "$a of a directory exited 0"; fi
  grep -q "cannot read $D: Is a directory" "$D/err.txt" || fail "$a: $(cat "$D/err.txt")"
done
rc_cat=$( (r=0; cat "$D/many.json" || r=$?; echo $r >"$D/rc") | head -c 10 >/dev/null; cat "$D/rc")
for a in "convert --from=json --to=json $D/many.json" "inspect $D/many.mp"; do
  # shellcheck disable=SC2086
  rc=$( (r=0; "$W" $a 2>"$D/err.txt" || r=$?; echo $r >"$D/rc") | head -c 10 >/dev/null; cat "$D/rc")
  [ "$rc" = "$rc_cat" ] || fail "$a | head -c 10: exit $rc, cat exits $rc_cat"
  [ ! -s "$D/err.txt" ] || fail "$a | head -c 10 printed: $(cat "$D/err.txt")"
done
ok "missing file and directory named; into head -c 10: exit $rc_cat as cat, nothing on stderr"

# 4. Errors: a value past --max-value names the cap and the option; a truncated stream the
# input and its offset.
awk 'BEGIN { s = "x"; while (length(s) < 2100000) s = s s; printf "\"%s\"\n", substr(s, 1, 2100000) }' >"$D/long.json"
if "$W" convert --from=json --to=json --max-value=1M "$D/long.json" >/dev/null 2>"$D/err.txt"; then
  fail "a 2 MB string passed --max-value=1M"
fi
grep -q "^wirekit: $D/long.json:1:1: cannot reformat JSON: .*(at byte 0)$" "$D/err.txt" ||
  fail "past the cap: $(cat "$D/err.txt")"
grep -q "at most 1048576 bytes.*--max-value" "$D/err.txt" || fail "the cap is not named: $(cat "$D/err.txt")"
"$W" convert --from=json --to=msgpack --max-value=3M "$D/long.json" "$D/long.mp" ||
  fail "--max-value=3M does not raise the cap"
if "$W" inspect --max-value=1M "$D/long.mp" >/dev/null 2>"$D/err.txt"; then
  fail "inspect of a 2 MB string passed --max-value=1M"
fi
grep -q "at most 1048576 bytes.*--max-value" "$D/err.txt" || fail "inspect: $(cat "$D/err.txt")"
"$W" inspect --max-value=3M "$D/long.mp" >/dev/null || fail "inspect --max-value=3M"
ok "past --max-value: the cap and the option are named; a larger --max-value passes"

head -c 5 "$D/v.mp" >"$D/cut.mp"
for a in "convert --from=msgpack --to=json" "inspect"; do
  # shellcheck disable=SC2086
  if "$W" $a "$D/cut.mp" >/dev/null 2>"$D/err.txt"; then fail "$a of a truncated stream exited 0"; fi
  grep -q "^wirekit: $D/cut.mp: .*(at byte [0-9]*)$" "$D/err.txt" || fail "$a: $(cat "$D/err.txt")"
done
ok "truncated MessagePack: the input and the offset are named (convert, inspect)"

# A MessagePack value JSON cannot hold (a string that is not UTF-8, a key that is an array,
# NaN) is the input's fault: it is written whole or not at all (no '[1,"' or '{' of it in the
# output, the values before it are), and the error names the input offset of the bad byte,
# not an offset into the output.
refused() { # refused INPUT_OCTAL EXPECTED_STDOUT MESSAGE OFFSET
  printf "$1" | "$W" convert --from msgpack --to json >"$D/half.json" 2>"$D/err.txt" &&
    fail "$3: exit 0"
  [ "$(od -An -c "$D/half.json" | tr -d ' ')" = "$2" ] ||
    fail "$3: output $(od -An -c "$D/half.json")"
  [ "$(cat "$D/err.txt")" = "wirekit: standard input: cannot convert MessagePack to JSON: $3 (at byte $4)" ] ||
    fail "$3: error $(cat "$D/err.txt")"
}
refused '\222\001\242\377\376' '' 'string is not valid UTF-8' 3
refused '\001\222\001\242\377\376' '1\n' 'string is not valid UTF-8' 4
refused '\201\241a\242\101\377' '' 'string is not valid UTF-8' 5
refused '\201\221\001\001' '' 'map key is an array, map or ext (JSON keys are strings)' 1
refused '\201\241a\201\221\001\001\001' '' 'map key is an array, map or ext (JSON keys are strings)' 4
refused '\001\313\177\370\0\0\0\0\0\0' '1\n' 'NaN or infinity has no JSON form' 1
ok "MessagePack JSON cannot hold: no half value in the output, the input offset named"

# 5. Progress on a terminal: a 70 MB regular file of whitespace around one value (quick to
# read, tiny output).
{ printf '[1,'; head -c 70000000 /dev/zero | tr '\0' ' '; printf '2]\n'; } >"$D/p.json"
if command -v script >/dev/null 2>&1; then
  script -qec "'$W' convert --from=json --to=json '$D/p.json' '$D/out.json'" /dev/null \
    >"$D/tty.txt" 2>&1 </dev/null || fail "convert under script: $(cat "$D/tty.txt")"
  last=$(tr '\r' '\n' <"$D/tty.txt" | grep 'MB/s' | tail -1)
  case "$last" in
    "70.0 MB of 70.0 MB (100%), "*" MB/s, ETA 0:00 ") ;;
    *) fail "last progress line '$last'";;
  esac
  tail -c 3 "$D/tty.txt" | od -An -c | grep -q '\\r  *\\n' || fail "progress does not end with a newline"
  [ "$(cat "$D/out.json")" = '[1,2]' ] || fail "output beside progress: $(cat "$D/out.json")"
  script -qec "'$W' convert --from=json --to=json '$D/p.json'" /dev/null >"$D/tty.txt" 2>&1 </dev/null
  ! grep -q 'MB/s' "$D/tty.txt" || fail "progress shown while the output goes to the terminal"
  script -qec "'$W' convert --progress --from=json --to=json '$D/p.json'" /dev/null >"$D/tty.txt" 2>&1 </dev/null
  grep -q 'MB/s' "$D/tty.txt" || fail "--progress does not force it when the output is the terminal"
  ok "progress on a terminal: bytes, percent, MB/s, ETA, a newline at the end; none by default when the output is the terminal too"
else
  echo "skip terminal checks (no script)"
fi
"$W" convert --progress --from=json --to=json "$D/p.json" >"$D/out.json" 2>/dev/null
[ "$(cat "$D/out.json")" = '[1,2]' ] || fail "output with --progress: $(cat "$D/out.json")"
ok "--progress in a pipe leaves the output as it is"
rm -f "$D/p.json" "$D/many.json" "$D/many.mp" "$D/long.json" "$D/long.mp"
echo "cli_stream_edges: $checks checks passed"
