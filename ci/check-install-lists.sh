#!/usr/bin/env bash
# Fails when the build looks for a package or program that the install
# lists (ci/install-deps.sh and ci/packages.d/) do not name: every
# find_package, pkg_check_modules and find_program in the CMake files must
# map to a Debian package below, and that package must be listed, so a bare
# Debian 12 gets it from the README's commands and not by luck.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

# CMake name -> the Debian package that provides it.
declare -A provider=(
  [CLI11]=libcli11-dev [nlohmann_json]=nlohmann-json3-dev [ZLIB]=zlib1g-dev [zstd]=libzstd-dev
  [EXPAT]=libexpat1-dev [GTest]=libgtest-dev [benchmark]=libbenchmark-dev [Threads]=build-essential
  [PkgConfig]=pkg-config [Git]=git [libelf]=libelf-dev [libvirt]=libvirt-dev [libtracecmd]=libtracecmd-dev
  [rtla]=rtla [trace-cmd]=trace-cmd
)

listed=$(sed -n '/^packages=(/,/^)/p' "$root/ci/install-deps.sh" | tr -s ' ()' '\n')
listed+=$'\n'$(grep -hv '^#' "$root"/ci/packages.d/*.txt | awk '{print $1}')

cmake_files=$(cd "$root" && git ls-files 'CMakeLists.txt' '*/CMakeLists.txt' '*.cmake' 2>/dev/null ||
              find . -name CMakeLists.txt -o -name '*.cmake' | grep -v '^./build')
wanted=$(cd "$root" && for f in $cmake_files; do
  sed -nE 's/.*find_package\(([A-Za-z0-9_]+).*/\1/p; s/.*pkg_check_modules\([A-Z_]+ .*(IMPORTED_TARGET|QUIET|REQUIRED|GLOBAL) ([a-z0-9_-]+)\).*/\2/p; s/.*find_program\([A-Z_]+ ([a-z0-9_-]+)\).*/\1/p' "$f"
done | sort -u)

status=0
for name in $wanted; do
  pkg=${provider[$name]:-}
  if [[ -z "$pkg" ]]; then
    echo "check-install-lists: the build looks for '$name': say which Debian package provides it (this script) and list that package"
    status=1
  elif [[ "$pkg" != git ]] && ! grep -qx "$pkg" <<<"$listed"; then
    echo "check-install-lists: '$name' comes from $pkg, which neither ci/install-deps.sh nor ci/packages.d/ installs"
    status=1
  fi
done
[[ $status -eq 0 ]] && echo "check-install-lists: $(wc -w <<<"$wanted") packages and programs the build looks for are all installed by the lists"
exit $status
