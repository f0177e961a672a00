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
