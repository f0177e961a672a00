#!/usr/bin/env bash
# Starts or stops the real servers the integration tests talk to: PostgreSQL 15 (initdb in a
# temp dir, loopback TCP) and Redis 7 (loopback, no persistence).
#   scripts/servers.sh start   -> prints `export WK_PG_DSN=... WK_REDIS_URL=...` lines
#   scripts/servers.sh stop
# State lives in $WK_SERVERS_DIR (default /tmp/wirekit-servers). Ports: $WK_PG_PORT (55432),
# $WK_REDIS_PORT (56379) and, when openssl is there, the same Redis over TLS on
# $WK_REDIS_TLS_PORT ($WK_REDIS_PORT + 1000: 57379) with a CA and certificate made here (WK_REDIS_TLS_URL,
# WK_REDIS_TLS_CA; no client certificate asked).
set -euo pipefail
state=${WK_SERVERS_DIR:-/tmp/wirekit-servers}
pg_port=${WK_PG_PORT:-55432}
redis_port=${WK_REDIS_PORT:-56379}
redis_tls_port=${WK_REDIS_TLS_PORT:-$((redis_port + 1000))}
pgbin=/usr/lib/postgresql/15/bin
[ -x "$pgbin/initdb" ] || pgbin=$(pg_config --bindir)

as_pg() {
  # PostgreSQL refuses to run as root: use the postgres account when we are root.
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start() {
  stop >/dev/null 2>&1 || true
  rm -rf "$state"
  mkdir -p "$state/pg" "$state/redis"
  [ "$(id -u)" = 0 ] && chown -R postgres:postgres "$state/pg"
  as_pg "$pgbin/initdb" -D "$state/pg/data" -U wirekit -A trust --no-sync -E UTF8 \
    --locale=C >"$state/pg/initdb.log" 2>&1
  as_pg "$pgbin/pg_ctl" -D "$state/pg/data" -l "$state/pg/server.log" -w -t 60 \
    -o "-p $pg_port -k $state/pg -c listen_addresses=127.0.0.1 -c fsync=off \
        -c synchronous_commit=off -c full_page_writes=off -c wal_level=logical \
        -c max_replication_slots=20 -c max_wal_senders=20" start >/dev/null
  tls=()
  if command -v openssl >/dev/null 2>&1; then
    t="$state/redis/tls"
    mkdir -p "$t"
    k=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
    openssl req -x509 "${k[@]}" -keyout "$t/ca.key" -out "$t/ca.crt" -days 30 \
      -subj /CN=wirekit-test-ca >/dev/null 2>&1
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$t/san.ext"
    openssl req "${k[@]}" -keyout "$t/server.key" -out "$t/server.csr" -subj /CN=localhost \
      >/dev/null 2>&1
    openssl x509 -req -in "$t/server.csr" -CA "$t/ca.crt" -CAkey "$t/ca.key" \
      -CAcreateserial -out "$t/server.crt" -days 30 -extfile "$t/san.ext" >/dev/null 2>&1
    tls=(--tls-port "$redis_tls_port" --tls-cert-file "$t/server.crt"
         --tls-key-file "$t/server.key" --tls-ca-cert-file "$t/ca.crt" --tls-auth-clients no)
  fi
  redis-server --port "$redis_port" --bind 127.0.0.1 --daemonize yes --save "" \
    --appendonly no --dir "$state/redis" --pidfile "$state/redis/redis.pid" \
    --logfile "$state/redis/redis.log" "${tls[@]}"
  for _ in $(seq 50); do
    redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break
    sleep 0.1
  done
  # The server answering must be ours, not one left on the port by an earlier run.
  [ "$(redis-cli -p "$redis_port" info server | sed -n 's/^process_id:\([0-9]*\).*/\1/p')" = \
    "$(cat "$state/redis/redis.pid" 2>/dev/null)" ] ||
    { echo "servers.sh: Redis port $redis_port is held by another server" >&2; exit 1; }
  echo "export WK_PG_DSN='host=127.0.0.1 port=$pg_port user=wirekit dbname=postgres'"
  echo "export WK_REDIS_URL='redis://127.0.0.1:$redis_port'"
  echo "export WK_REDIS_PORT='$redis_port'"
  if [ ${#tls[@]} -gt 0 ]; then
    echo "export WK_REDIS_TLS_URL='rediss://127.0.0.1:$redis_tls_port'"
    echo "export WK_REDIS_TLS_CA='$state/redis/tls/ca.crt'"
  fi
}

stop() {
  if [ -d "$state/pg/data" ]; then
    as_pg "$pgbin/pg_ctl" -D "$state/pg/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  redis-cli -p "$redis_port" shutdown nosave >/dev/null 2>&1 || true
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
