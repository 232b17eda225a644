#!/usr/bin/env bash
# Installs the Debian packages tracebed builds and tests with. Idempotent:
# only missing packages are installed, and `apt-get update` runs only then.
set -euo pipefail

packages=(
  build-essential cmake pkg-config clang libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libfmt-dev libcli11-dev nlohmann-json3-dev zlib1g-dev libzstd-dev
  trace-cmd zstd
)
# Layers add what they need here (one file per layer keeps edits apart).
for extra in "$(dirname "$0")"/packages.d/*.txt; do
  [ -e "$extra" ] || continue
  while read -r pkg _; do
    [[ -n "$pkg" && "$pkg" != \#* ]] && packages+=("$pkg")
  done < "$extra"
done

missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "ci/install-deps: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
