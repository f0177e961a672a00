#!/bin/sh
# `wirekit convert` and `wirekit inspect` stream: the first value's output appears while the
# producer is still pausing (a pipe with a 3 s pause; the first line must arrive within 2 s),
# peak RSS stays bounded on a generated 300 MB stream (/usr/bin/time -v; skipped when the
# tool is absent or under a sanitizer, whose shadow memory is not the program's), a progress
# line is shown on a terminal (run under `script`) and not in a pipe, --progress forces it
# and --no-progress turns it off, JSON errors name the file, line:column and byte offset, and
# one big JSON document converts to MessagePack in a small multiple of its size, a bad byte
# inside it leaving none of it on standard output.
# Usage: cli_stream.sh WIREKIT WORKDIR [RSS_LIMIT_KB]
set -eu
W=$1
D=$2
RSS_LIMIT=${3:-16384}
mkdir -p "$D"
. "$(dirname "$0")/cli_checks.sh"

# 1. First output before the end of input, JSON -> JSON and JSON -> MessagePack -> inspect.
start=$(now_ms)
first=$( (printf '{"a":1}\n'; sleep 3; printf '[2]\n') |
  "$W" convert --from=json --to=json | { IFS= read -r line; echo "$line $(now_ms)"; cat >/dev/null; })
t=${first##* }
line=${first% *}
[ "$line" = '{"a":1}' ] || fail "first line '$line'"
[ $((t - start)) -lt 2000 ] || fail "first line after $((t - start)) ms (the input pauses 3 s)"
ok "convert: first line after $((t - start)) ms while the input pauses 3 s"

start=$(now_ms)
first=$( (printf '\223\001\002\003'; sleep 3; printf '\300') |
  "$W" inspect | { IFS= read -r hdr; IFS= read -r line; echo "$line|$(now_ms)"; cat >/dev/null; })
t=${first##*|}
line=${first%|*}
case "$line" in 0*fixarray*) ;; *) fail "inspect first line '$line'";; esac
[ $((t - start)) -lt 2000 ] || fail "inspect first value after $((t - start)) ms"
ok "inspect (standard input, no '-'): first value after $((t - start)) ms"

# 2. Peak RSS on a 300 MB stream.
unit='{"id":123456,"name":"wirekit streams","tags":["a","b","c"],"ok":true,"score":12.5,"nested":{"k":[1,2,3,{"x":null}]}}'
n=$((300 * 1000 * 1000 / (${#unit} + 1)))
if [ -x /usr/bin/time ] && [ -z "${WK_SANITIZE_BUILD:-}" ]; then
  yes "$unit" | head -n "$n" | /usr/bin/time -v "$W" convert --from=json --to=msgpack \
    >"$D/big.mp" 2>"$D/time1.txt" || fail "convert of 300 MB failed: $(tail -3 "$D/time1.txt")"
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$D/time1.txt")
  [ "$rss" -le "$RSS_LIMIT" ] || fail "JSON Lines -> MessagePack of 300 MB: peak RSS ${rss} KB > ${RSS_LIMIT} KB"
  ok "300 MB JSON Lines -> MessagePack: peak RSS ${rss} KB"
  "$W" inspect --no-progress "$D/big.mp" | tail -1 | grep -q "^$n top-level values" ||
    fail "inspect does not count $n values"
  /usr/bin/time -v "$W" convert --from=msgpack --to=json "$D/big.mp" >/dev/null 2>"$D/time2.txt" ||
    fail "convert back failed"
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$D/time2.txt")
  [ "$rss" -le "$RSS_LIMIT" ] || fail "MessagePack -> JSON: peak RSS ${rss} KB > ${RSS_LIMIT} KB"
  ok "MessagePack -> JSON Lines ($(wc -c <"$D/big.mp") bytes): peak RSS ${rss} KB"
  rm -f "$D/big.mp"
else
  echo "skip peak RSS (no /usr/bin/time, or a sanitizer build)"
fi

# 3. Progress: on a terminal for a regular file > 64 MB, not in a pipe; forced and refused.
yes "$unit" | head -n $((70 * 1000 * 1000 / (${#unit} + 1))) >"$D/p.json"
if command -v script >/dev/null 2>&1; then
  script -qec "'$W' convert --from=json --to=msgpack '$D/p.json' /dev/null" /dev/null >"$D/tty.txt" 2>&1 </dev/null ||
    fail "convert under script failed: $(cat "$D/tty.txt")"
  grep -q 'MB/s' "$D/tty.txt" || fail "no progress line on a terminal: $(cat "$D/tty.txt")"
  grep -q '(100%)' "$D/tty.txt" || fail "progress does not end at 100%"
  ok "progress line on a terminal"
  script -qec "'$W' convert --no-progress --from=json --to=msgpack '$D/p.json' /dev/null" /dev/null >"$D/tty.txt" 2>&1 </dev/null
  ! grep -q 'MB/s' "$D/tty.txt" || fail "--no-progress still shows progress"
  ok "--no-progress on a terminal"
else
  echo "skip terminal checks (no script)"
fi
"$W" convert --from=json --to=msgpack "$D/p.json" /dev/null 2>"$D/pipe.txt"
[ ! -s "$D/pipe.txt" ] || fail "progress in a pipe: $(cat "$D/pipe.txt")"
"$W" convert --progress --from=json --to=msgpack "$D/p.json" /dev/null 2>"$D/pipe.txt"
grep -q 'MB/s' "$D/pipe.txt" || fail "--progress shows nothing"
ok "no progress in a pipe by default; --progress forces it"
rm -f "$D/p.json"

# 4. JSON errors: file, line:column, byte offset.
printf '{"a":1}\n[1,\n  2,]\n' >"$D/bad.json"
if "$W" convert --from=json --to=msgpack "$D/bad.json" /dev/null 2>"$D/err.txt"; then
  fail "bad JSON accepted"
fi
grep -qx "wirekit: $D/bad.json:3:5: cannot convert JSON to MessagePack: trailing comma in array (at byte 16)" "$D/err.txt" ||
  fail "error line: $(cat "$D/err.txt")"
ok "JSON error names file:line:column and byte"

# 5. One big document: JSON -> MessagePack streams it through events (no tree of about 17
# times its size): 100 MB of [1,1,...] in less than 4 times its size (generous: about 1.6
# measured; 17 before), output checked by its header and length. A bad byte in the middle of
# a 10 MB value leaves nothing of it on standard output, only the value before it.
if [ -x /usr/bin/time ] && [ -z "${WK_SANITIZE_BUILD:-}" ]; then
  { printf '['; yes 1 | head -n 49999999 | tr '\n' ','; printf '1]'; } >"$D/doc.json"
  /usr/bin/time -v "$W" convert --from=json --to=msgpack "$D/doc.json" "$D/doc.mp" \
    2>"$D/time3.txt" || fail "convert of a 100 MB document failed: $(tail -3 "$D/time3.txt")"
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$D/time3.txt")
  [ "$rss" -le 390625 ] || fail "a 100 MB JSON document -> MessagePack: peak RSS ${rss} KB (> 4 times)"
  [ "$(wc -c <"$D/doc.mp")" = 50000005 ] && [ "$(head -c 5 "$D/doc.mp" | od -An -tx1 | tr -d ' ')" = dd02faf080 ] ||
    fail "the 100 MB document's MessagePack: $(wc -c <"$D/doc.mp") bytes, $(head -c 5 "$D/doc.mp" | od -An -tx1)"
  rm -f "$D/doc.json" "$D/doc.mp"
  ok "a 100 MB JSON document -> MessagePack: peak RSS ${rss} KB"
else
  echo "skip the big document's peak RSS (no /usr/bin/time, or a sanitizer build)"
fi
{ printf '[0]\n['; yes 1 | head -n 2500000 | tr '\n' ','; printf 'x'; yes 2 | head -n 2500000 | tr '\n' ','; printf '3]\n[4]\n'; } >"$D/bad.json"
if "$W" convert --from=json --to=msgpack "$D/bad.json" >"$D/bad.mp" 2>"$D/err.txt"; then
  fail "a bad byte in a big value accepted"
fi
[ "$(od -An -tx1 "$D/bad.mp" | tr -d ' ')" = 9100 ] || fail "output of a failing big value: $(od -An -tx1 "$D/bad.mp" | head -2)"
grep -q "^wirekit: $D/bad.json:2:5000002: cannot convert JSON to MessagePack: .* (at byte 5000005)" "$D/err.txt" ||
  fail "error line: $(cat "$D/err.txt")"
rm -f "$D/bad.json" "$D/bad.mp"
ok "a bad byte in a 10 MB value leaves only the value before it on standard output"
echo "cli_stream: $checks checks passed"
