#!/usr/bin/env bash
# Looks at a `tracebed test --gcov` HTML report in a real browser: headless
# Chromium renders index.html and one source page to PNGs, and every local
# link of the pages on the way must name a file that exists.
#   ci/gcov-html-check.sh REPORT_DIR [OUT_DIR]   (REPORT_DIR: <logs>/gcov)
# Installs chromium itself (it is not in ci/install-deps.sh: only this
# check needs it).
set -euo pipefail
report=${1:?usage: ci/gcov-html-check.sh REPORT_DIR [OUT_DIR]}
out=${2:-$report/screenshots}
html=$report/html
[[ -f $html/index.html ]] || { echo "no $html/index.html: not a --gcov report" >&2; exit 2; }
if ! command -v chromium >/dev/null; then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends chromium
fi
mkdir -p "$out"

# Local links of a page (not http:, not #anchors), relative to its directory.
check_links() {
  local page=$1 dir bad=0
  dir=$(dirname "$page")
  while read -r link; do
    link=${link%%#*}
    [[ -z $link || $link == http* || $link == mailto:* ]] && continue
    if [[ ! -e $dir/$link ]]; then
      echo "broken link in $page: $link" >&2
      bad=1
    fi
  done < <(grep -o 'href="[^"]*"' "$page" | sed 's/^href="//; s/"$//' | sort -u)
  return $bad
}

shoot() {
  local page=$1 png=$2
  chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,2000 \
    --screenshot="$png" "file://$page" >/dev/null 2>&1
  [[ -s $png ]] || { echo "chromium rendered nothing for $page" >&2; return 1; }
  echo "$png"
}

status=0
check_links "$html/index.html" || status=1
# The directory page of the first profiled path, then its first file's page.
dir_page=$(grep -o 'href="[^"]*/index.html"' "$html/index.html" | head -1 | sed 's/^href="//; s/"$//')
[[ -n $dir_page ]] || { echo "index.html links no directory page" >&2; exit 1; }
check_links "$html/$dir_page" || status=1
file_page=$(grep -o 'href="[^"]*\.c\.gcov\.html"' "$html/$dir_page" | head -1 | sed 's/^href="//; s/"$//')
[[ -n $file_page ]] || { echo "$dir_page links no source page" >&2; exit 1; }
file_path=$(dirname "$html/$dir_page")/$file_page
check_links "$file_path" || status=1
shoot "$html/index.html" "$out/index.png" || status=1
shoot "$html/$dir_page" "$out/directory.png" || status=1
shoot "$file_path" "$out/source.png" || status=1
exit $status
