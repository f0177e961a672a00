#!/bin/sh
# wirekit cache against a redis-server started here on a unix socket only (no TCP port, so
# no clash), with a password: put/get through unix://:password@/path?db=N, the password from
# WK_REDIS_PASSWORD or REDISCLI_AUTH (not over the URL's), --client-name; a wrong password and no password exit 1 naming WRONGPASS
# and NOAUTH without echoing the password; a missing socket exits 1. Skipped (77) without
# redis-server.
set -u
w=$1
command -v redis-server >/dev/null 2>&1 || { echo "redis-server not installed"; exit 77; }
dir=$(mktemp -d /tmp/wk-cli-auth-XXXXXX)
sock=$dir/redis.sock
redis-server --port 0 --unixsocket "$sock" --unixsocketperm 700 --requirepass 'pw1' \
    --save '' --appendonly no --dir "$dir" --daemonize no >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
i=0
while [ ! -S "$sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
[ -S "$sock" ] || { echo "redis-server did not start"; exit 1; }
u="unix://:pw1@$sock?db=2"
"$w" cache --redis "$u" --client-name wk-cli put 7 '{"a":1}' || exit 1
got=$("$w" cache --redis "$u" get 7) || exit 1
[ "$got" = '{"a":1}' ] || { echo "get gave: $got"; exit 1; }
got=$(WK_REDIS_PASSWORD=pw1 "$w" cache --redis "unix://$sock?db=2" get 7) || exit 1
[ "$got" = '{"a":1}' ] || { echo "get (password from env) gave: $got"; exit 1; }
# db 0 does not have it
WK_REDIS_PASSWORD=pw1 "$w" cache --redis "unix://$sock" get 7 2>/dev/null
[ $? -eq 1 ] || { echo "db 0 should not have the key"; exit 1; }
err=$("$w" cache --redis "unix://:wrongpw9@$sock" get 7 2>&1 >/dev/null)
rc=$?
[ $rc -eq 1 ] || { echo "wrong password: exit $rc"; exit 1; }
echo "$err" | grep -q WRONGPASS || { echo "wrong password message: $err"; exit 1; }
echo "$err" | grep -q wrongpw9 && { echo "the password was echoed: $err"; exit 1; }
err=$("$w" cache --redis "unix://$sock" get 7 2>&1 >/dev/null)
rc=$?
[ $rc -eq 1 ] || { echo "no password: exit $rc"; exit 1; }
echo "$err" | grep -q NOAUTH || { echo "no password message: $err"; exit 1; }
err=$("$w" cache --redis "unix://$dir/none.sock" get 7 2>&1 >/dev/null)
rc=$?
[ $rc -eq 1 ] || { echo "missing socket: exit $rc"; exit 1; }
echo "$err" | grep -q "no such unix socket" || { echo "missing socket message: $err"; exit 1; }
# REDISCLI_AUTH as redis-cli reads it: the password when the URL has none, not over the URL's
got=$(REDISCLI_AUTH=pw1 "$w" cache --redis "unix://$sock?db=2" get 7) ||
  { echo "REDISCLI_AUTH was not used"; exit 1; }
[ "$got" = '{"a":1}' ] || { echo "get (password from REDISCLI_AUTH) gave: $got"; exit 1; }
got=$(REDISCLI_AUTH=wrongpw9 "$w" cache --redis "$u" get 7) ||
  { echo "REDISCLI_AUTH replaced the URL's password"; exit 1; }
# redis://secret@host: the userinfo without ':' is the password, as redis-cli reads it
got=$("$w" cache --redis "unix://pw1@$sock?db=2" get 7) ||
  { echo "unix://PASSWORD@path was not read as a password"; exit 1; }
echo "wirekit cache: unix socket, password, db, client name, WRONGPASS/NOAUTH, REDISCLI_AUTH as expected"
