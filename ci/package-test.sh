#!/usr/bin/env bash
# Builds the .deb (cpack), installs it with its dependencies, and runs the
# installed tracebed from /usr as a user would: the kernel catalogue and the
# smoke suite in a guest. Removes the package again. Needs root (apt).
#   ci/package-test.sh [BUILD_DIR]     (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
if [ "$(id -u)" -ne 0 ]; then
  echo "ci/package-test: needs root to install the package; skipped"
  exit 0
fi
rm -f "$build"/tracebed_*.deb
(cd "$build" && cpack -G DEB >/dev/null)
deb=$(ls "$build"/tracebed_*.deb)
echo "ci/package-test: $(basename "$deb") ($(du -h "$deb" | cut -f1))"
trap 'dpkg -r tracebed >/dev/null 2>&1 || true' EXIT
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$PWD/$deb" >/dev/null
# From outside the source and build trees, so nothing is found by accident.
cd /
/usr/bin/tracebed --version
/usr/bin/tracebed kernels list >/dev/null
/usr/bin/tracebed test --kernel debian-6.12 --suites smoke
echo "ci/package-test: the installed tracebed ran the smoke suite"
