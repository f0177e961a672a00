#!/usr/bin/env bash
# Builds the Debian packages (libwirekit0, libwirekit-dev, wirekit) from the committed tree
# with dpkg-buildpackage -us -uc -b in a scratch copy under build/deb/, checks them with
# lintian (fails on errors; warnings are printed), and leaves the .debs in build/deb/.
# Not part of scripts/test.sh. Needs debhelper, dpkg-dev, lintian (scripts/deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
out=$PWD/build/deb
version=$(dpkg-parsechangelog -S Version)
rm -rf "$out"
mkdir -p "$out/src"
# The committed tree only: no build trees, node_modules or local files.
git archive --format=tar --prefix="wirekit-$version/" HEAD | tar -x -C "$out/src"
(cd "$out/src/wirekit-$version" && dpkg-buildpackage -us -uc -b)
mv "$out"/src/*.deb "$out"/src/*.changes "$out"/src/*.buildinfo "$out"/ 2>/dev/null || true
ls -l "$out"/*.deb
echo "== lintian =="
lintian --fail-on error --info "$out"/*.changes

# The packages as a consumer sees them: unpacked into a scratch root (not installed on this
# machine), the tests/install consumers built against it with CMake and pkg-config and run.
echo "== consumer against the packages =="
root=$out/root
for d in "$out"/libwirekit0_*.deb "$out"/libwirekit-dev_*.deb "$out"/wirekit_*.deb; do
  dpkg-deb -x "$d" "$root"
done
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir=$root/usr/lib/$multiarch
cp -r tests/install "$out/consumer"
cmake -S "$out/consumer" -B "$out/consumer/build" -DCMAKE_PREFIX_PATH="$root/usr" >/dev/null
cmake --build "$out/consumer/build" >/dev/null
for exe in consumer consumer_static consumer_pq consumer_pq_static consumer_redis \
           consumer_redis_static; do
  LD_LIBRARY_PATH=$libdir "$out/consumer/build/$exe"
done
PKG_CONFIG_PATH=$libdir/pkgconfig cc -std=c11 tests/install/consumer_pq.c -o "$out/pc_pq" \
  $(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs wirekit-pq)
LD_LIBRARY_PATH=$libdir "$out/pc_pq"
LD_LIBRARY_PATH=$libdir "$root/usr/bin/wirekit" mime 'Text/HTML; Charset="utf-8"'
man -l "$root/usr/share/man/man1/wirekit.1.gz" >/dev/null
echo "deb: packages built, lintian clean of errors, consumers built and run against them"
