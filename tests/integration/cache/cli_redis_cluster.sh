#!/bin/sh
# wirekit cache --redis-cluster against a 3-master Redis Cluster started here on loopback
# ports WK_CLI_CLUSTER_PORT_BASE.. (default 28170, else 28070; bus ports +5) in a temp dir: 30 puts spread
# over the masters, get through another seed, keys lists all 30 (SCAN on every master), ttl,
# stats counts them, a dead seed list exits 1 naming the cause. Skipped (77) without
# redis-server / redis-cli.
set -u
w=$1
command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 ||
    { echo "redis-server / redis-cli not installed"; exit 77; }
dir=$(mktemp -d /tmp/wk-cli-cluster-XXXXXX)
pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$dir"; }
trap cleanup EXIT
# Three nodes at $1 (bus ports +5); false when one does not answer (another program may
# listen on a fixed port: the caller tries another base).
start_nodes() {
    for i in 0 1 2; do
        mkdir -p "$dir/$1-$i"
        redis-server --port $(($1 + i)) --bind 127.0.0.1 --cluster-enabled yes \
            --cluster-port $(($1 + 5 + i)) --cluster-config-file nodes.conf --dir "$dir/$1-$i" \
            --save '' --appendonly no --daemonize no >/dev/null 2>&1 &
        pids="$pids $!"
    done
    for i in 0 1 2; do
        n=0
        until redis-cli -p $(($1 + i)) ping >/dev/null 2>&1; do
            [ $n -ge 60 ] && return 1
            sleep 0.05; n=$((n + 1))
        done
    done
}
base=${WK_CLI_CLUSTER_PORT_BASE:-28170}
if ! start_nodes "$base"; then
    for p in $pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    pids=""
    base=$((base - 100))
    start_nodes "$base" || { echo "cannot start cluster nodes"; exit 1; }
fi
redis-cli --cluster create 127.0.0.1:$base 127.0.0.1:$((base + 1)) 127.0.0.1:$((base + 2)) \
    --cluster-yes >/dev/null 2>&1 || { echo "cluster create failed"; exit 1; }
n=0
until [ "$(redis-cli -p $base cluster info 2>/dev/null | grep -c cluster_state:ok)" = 1 ] &&
      [ "$(redis-cli -p $((base + 2)) cluster info 2>/dev/null | grep -c cluster_state:ok)" = 1 ]
do
    [ $n -ge 200 ] && { echo "cluster never became ok"; exit 1; }
    sleep 0.05; n=$((n + 1))
done
c="--redis-cluster 127.0.0.1:$base,127.0.0.1:$((base + 1))"
i=0
while [ $i -lt 30 ]; do
    "$w" cache $c --ns cl put "$i" "{\"n\":$i}" || { echo "put $i failed"; exit 1; }
    i=$((i + 1))
done
for p in $base $((base + 1)) $((base + 2)); do
    [ "$(redis-cli -p $p dbsize)" -gt 0 ] || { echo "master $p holds no key"; exit 1; }
done
got=$("$w" cache --redis-cluster 127.0.0.1:$((base + 2)) --ns cl get 17) || exit 1
[ "$got" = '{"n":17}' ] || { echo "get gave: $got"; exit 1; }
k=$("$w" cache $c --ns cl keys | sort -n | tr '\n' ' ')
[ "$k" = "$(seq 0 29 | tr '\n' ' ')" ] || { echo "keys gave: $k"; exit 1; }
t=$("$w" cache $c --ns cl --ttl 50000 put 3 '{}' && "$w" cache $c --ns cl ttl 3) || exit 1
[ "$t" -gt 0 ] && [ "$t" -le 50000 ] || { echo "ttl gave: $t"; exit 1; }
"$w" cache $c --ns cl ttl 99 2>/dev/null
[ $? -eq 1 ] || { echo "ttl of a missing id should exit 1"; exit 1; }
s=$("$w" cache $c --ns cl stats) || exit 1
[ "$s" = '{"redis_keys":30,"redis_keys_version":30}' ] || { echo "stats gave: $s"; exit 1; }
err=$("$w" cache --redis-cluster 127.0.0.1:$((base + 9)) --ns cl get 1 2>&1 >/dev/null)
rc=$?
[ $rc -eq 1 ] || { echo "dead seed: exit $rc"; exit 1; }
echo "$err" | grep -q "connection refused" || { echo "dead seed message: $err"; exit 1; }
echo "wirekit cache --redis-cluster: put/get/keys/ttl/stats across masters as expected"
