#!/usr/bin/env bash
# A git tree of Debian's linux-source-7.2, the source tracebed-7.2 is built
# from (pinned by its recipe): one commit, for `tracebed bisect` and
# `tracebed mutate` to work on. Makes DIR/linux; an existing one is kept.
#   ci/linux-source-tree.sh DIR [BUILD_DIR]   (BUILD_DIR: build, for the apt lists)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?usage: ci/linux-source-tree.sh DIR [BUILD_DIR]}
build=${2:-$src/build}
cache=${TRACEBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tracebed}
tree=$dir/linux
if [[ -e $tree/.git ]]; then
  echo "$tree"
  exit 0
fi

fetch_source() {
  local recipe=$src/vmimages/kernels/tracebed-7.2/recipe.json
  local version sha deb
  version=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["source"]["version"])' "$recipe")
  sha=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["source"]["sha256"])' "$recipe")
  deb=$cache/debs/linux-source-7.2_${version}_all.deb
  if [[ ! -f $deb ]]; then
    # The private apt lists come with tracebed's first fetch.
    [[ -f $cache/apt/sources.list ]] || "$build/tracebed" kernels fetch debian-6.12 >&2
    mkdir -p "$cache/debs"
    (cd "$cache/debs" && apt-get -q -o Dir::Etc::SourceList="$cache/apt/sources.list" \
      -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$cache/apt/lists" \
      -o Dir::Cache="$cache/apt/cache" -o Debug::NoLocking=1 -o APT::Sandbox::User=root \
      download "linux-source-7.2=$version") >&2  # stdout is the tree's path
  fi
  echo "$sha  $deb" | sha256sum -c --quiet - >&2
  echo "$deb"
}

rm -rf "$dir/unpack" "$dir/linux-source-7.2"
mkdir -p "$dir/unpack"
deb=$(fetch_source)
dpkg -x "$deb" "$dir/unpack"
tar -xf "$dir"/unpack/usr/src/linux-source-7.2.tar.* -C "$dir"
rm -rf "$dir/unpack"
mv "$dir/linux-source-7.2" "$tree"
git -C "$tree" init -q -b master
git -C "$tree" config user.name "Demo Developer"
git -C "$tree" config user.email dev@example.org
# Debian's .gitignore ignores everything at the top level (/*): -f.
git -C "$tree" add -f -A
git -C "$tree" commit -q -m "Linux 7.2.13 (Debian linux-source-7.2)"
echo "$tree"
