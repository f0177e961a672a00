#!/usr/bin/env bash
# Runs `wirekit mime` on real values and compares stdout and the exit status with what is
# expected. Usage: cli_mime.sh <path to the wirekit command>
set -u
W="$1"
fails=0
expect() { # name want_rc want_stdout args...
  local name="$1" want_rc="$2" want="$3"
  shift 3
  local out rc
  out="$("$W" "$@" 2>/tmp/wk_cli_mime_err.$$)"
  rc=$?
  if [ "$rc" != "$want_rc" ] || [ "$out" != "$want" ]; then
    echo "FAIL $name: exit $rc (want $want_rc)"
    echo "  got:  $out"
    echo "  want: $want"
    sed 's/^/  stderr: /' /tmp/wk_cli_mime_err.$$
    fails=$((fails + 1))
  else
    echo "ok   $name"
  fi
  rm -f /tmp/wk_cli_mime_err.$$
}

expect plain 0 $'application/json;charset=utf-8\ntext/html;charset="a b"' \
  mime 'Application/JSON; charset=utf-8' ' text/html;charset="a b";charset=x '
expect space-style 0 'multipart/form-data; boundary=----X' \
  mime --space 'multipart/form-data;boundary="----X"'
expect invalid-value 1 'a/b' mime text a/b
expect strict 1 '' mime --strict 'text/html ; charset=utf-8;x'
expect json 0 \
  '{"input":"Text/HTML; Charset=\"x\\\"y\"","output":"text/html;charset=\"x\\\"y\"","essence":"text/html","type":"text","subtype":"html","parameters":[["charset","x\"y"]]}' \
  mime --json 'Text/HTML; Charset="x\"y"'
expect json-invalid 1 \
  '{"input":"nope","output":null,"essence":null,"type":null,"subtype":null,"parameters":[]}' \
  mime --json nope
expect json-bytes 0 \
  '{"input":"a/b;x=\u00e9\t","output":"a/b;x=\"\u00e9\"","essence":"a/b","type":"a","subtype":"b","parameters":[["x","\u00e9"]]}' \
  mime --json $'a/b;x=\xe9\t'
expect json-utf8 0 \
  '{"input":"a/b;x=é","output":"a/b;x=\"é\"","essence":"a/b","type":"a","subtype":"b","parameters":[["x","é"]]}' \
  mime --json --utf8 'a/b;x=é'
expect usage 2 '' mime
expect unknown-option 2 '' mime --bogus a/b
# negotiate: the chosen offer as given, 1 for none acceptable (406) or an invalid value
expect negotiate-browser 0 'text/html' mime negotiate \
  'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' application/json text/html
expect negotiate-wildcard-keeps-server-order 0 'application/vnd.msgpack' \
  mime negotiate '*/*' application/vnd.msgpack application/json
expect negotiate-q0-refuses 1 '' mime negotiate 'application/json;q=0' application/json
expect negotiate-empty-accepts-nothing 1 '' mime negotiate '' application/json
expect negotiate-bad-qvalue 1 '' mime negotiate 'text/html;q=2' text/html
expect negotiate-bad-offer 1 '' mime negotiate '*/*' nope
expect negotiate-as-written 0 'Application/JSON' \
  mime negotiate --utf8 'application/json;q=0.5, text/*;q=0.1' text/html Application/JSON
expect negotiate-needs-an-offer 2 '' mime negotiate '*/*'
if [ "$fails" != 0 ]; then
  echo "$fails failed"
  exit 1
fi
echo "all passed"
