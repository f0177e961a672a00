#!/bin/sh
# The entity service against the real servers: two processes A and B on free loopback ports,
# one table. A PUT through A is read back through B (B held the old value in its memory tier,
# so this proves the invalidation crossed processes); GET picks JSON or MessagePack by Accept
# with the Content-Type rendered by wirekit, 406 when neither is acceptable, 404 for no row;
# PUT takes JSON or MessagePack by Content-Type, 415 for anything else.
# usage: entity_service_test.sh SERVICE CURL   (exits 77, skipped, without WK_PG_DSN and
# WK_REDIS_URL)
set -u
svc=$1 curl=$2
[ -n "${WK_PG_DSN:-}" ] && [ -n "${WK_REDIS_URL:-}" ] || { echo "servers not set: skipped"; exit 77; }
command -v psql >/dev/null || { echo "psql not found: skipped"; exit 77; }
dir=$(mktemp -d)
table=entity_service_test_$$
fails=0 pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    psql "$WK_PG_DSN" -qc "DROP TABLE IF EXISTS $table" >/dev/null 2>&1
    rm -rf "$dir"
}
trap cleanup EXIT

# start NAME [cold]: runs a service and sets NAME_port once it listens (at most 60 s)
start() {
    "$svc" 0 "$table" ${2:-} >"$dir/$1.out" 2>"$dir/$1.err" &
    pids="$pids $!"
    i=0
    while ! grep -q '^listening on ' "$dir/$1.out" 2>/dev/null; do
        i=$((i + 1))
        if [ $i -gt 600 ] || ! kill -0 $! 2>/dev/null; then
            echo "FAIL: service $1 did not start:"; cat "$dir/$1.err"; exit 1
        fi
        sleep 0.1
    done
    eval "$1_port=$(sed -n 's/^listening on //p' "$dir/$1.out")"
}

# req NAME METHOD PATH [curl args...]: the status in $status, headers in $dir/h, body in $dir/b
req() {
    eval "port=\$$1_port"
    method=$2 path=$3
    shift 3
    status=$("$curl" -s -o "$dir/b" -D "$dir/h" -w '%{http_code}' -X "$method" "$@" \
        "http://127.0.0.1:$port$path")
}

check() { # NAME CONDITION-DESCRIPTION then the test's exit status
    if [ "$2" != 0 ]; then
        echo "FAIL: $1 (status $status)"; head -c 300 "$dir/b"; echo
        fails=$((fails + 1))
    else
        echo "ok   $1"
    fi
}

psql "$WK_PG_DSN" -qc "CREATE TABLE $table (id int8 PRIMARY KEY, username text NOT NULL,
    password text, age int4, enabled bool NOT NULL, metadata jsonb NOT NULL)" ||
    { echo "FAIL: cannot create $table"; exit 1; }
start A
start B
body='{"username":"root","password":"secret","age":20,"enabled":true,"metadata":{"hello":"world","int":10}}'
# what GET answers: jsonb keeps an object's keys shorter first, so metadata comes back reordered
stored='{"username":"root","password":"secret","age":20,"enabled":true,"metadata":{"int":10,"hello":"world"}}'
req A PUT /users/1 -H 'Content-Type: application/json' --data-binary "$body"
[ "$status" = 204 ]; check "PUT JSON through A" $?
req B GET /users/1 -H 'Accept: application/json'
[ "$status" = 200 ] && [ "$(cat "$dir/b")" = "$stored" ] &&
    grep -qi '^content-type: application/json' "$dir/h"; check "GET JSON through B" $?
req B GET /users/1 -H 'Accept: text/html;q=0.9, application/x-msgpack'
[ "$status" = 200 ] && [ "$(wc -c <"$dir/b")" = 72 ] &&
    grep -qi '^content-type: application/x-msgpack' "$dir/h"; check "GET MessagePack by the name asked" $?
cp "$dir/b" "$dir/age20.mp"
req B GET /users/1 -H 'Accept: text/html'
[ "$status" = 406 ]; check "406 when neither format is acceptable" $?
req B GET /users/1
[ "$status" = 200 ] && grep -qi '^content-type: application/json' "$dir/h"; check "no Accept: JSON" $?
req B GET /users/2 -H 'Accept: */*'
[ "$status" = 404 ]; check "404 for no row" $?
req A PUT /users/1 -H 'Content-Type: text/plain' --data-binary x
[ "$status" = 415 ]; check "415 for a body that is neither" $?
req A PUT /users/1 -H 'Content-Type: application/json' --data-binary '{"username":1}'
[ "$status" = 400 ]; check "400 for a body that does not decode" $?

# B holds age 20 in its memory tier; a PUT through A must reach it.
new=$(echo "$stored" | sed 's/"age":20/"age":21/')
req A PUT /users/1 -H 'Content-Type: application/json' --data-binary "$new"
[ "$status" = 204 ]; check "PUT the new value through A" $?
i=0 seen=no
while [ $i -lt 200 ]; do # the invalidation travels through Redis: wait for it, at most 20 s
    req B GET /users/1 -H 'Accept: application/json'
    if [ "$(cat "$dir/b")" = "$new" ]; then seen=yes; break; fi
    i=$((i + 1)); sleep 0.1
done
[ "$seen" = yes ]; check "B sees the PUT made through A" $?

# Back to age 20 by a MessagePack body, through B this time; A sees it.
req A GET /users/1 -H 'Accept: application/json' # A holds age 21 now
req B PUT /users/1 -H 'Content-Type: application/vnd.msgpack' --data-binary "@$dir/age20.mp"
[ "$status" = 204 ]; check "PUT MessagePack through B" $?
i=0 seen=no
while [ $i -lt 200 ]; do
    req A GET /users/1 -H 'Accept: application/json'
    if [ "$(cat "$dir/b")" = "$stored" ]; then seen=yes; break; fi
    i=$((i + 1)); sleep 0.1
done
[ "$seen" = yes ]; check "A sees the PUT made through B" $?

echo "$((13 - fails)) passed, $fails failed"
[ $fails = 0 ]
