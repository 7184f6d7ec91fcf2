#!/usr/bin/env bash
# Builds app/web/assets/editor.bundle.js, the code editor of the Exercise panel, from the exact packages of
# package-lock.json and the sources in src/: `npm ci`, then esbuild (one minified IIFE, no imports, nothing
# fetched at run time), and editor.bundle.LICENSE.txt beside it. The bundle's first line records a sha256 of
# this folder's inputs (tests/test_web_editor.py recomputes it without Node: rebuild after changing any of them).
# Needs Node 20 and npm; the built files are committed, so installing ascendsim needs neither.
set -euo pipefail
cd "$(dirname "$0")"
assets=../assets
inputs=(build.sh notice.js package.json package-lock.json)
mapfile -t sources < <(find src -type f | LC_ALL=C sort)
inputs+=("${sources[@]}")
digest=$(sha256sum "${inputs[@]}" | sha256sum | cut -d' ' -f1)

npm ci --no-audit --no-fund --loglevel=error
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
node_modules/.bin/esbuild src/editor.js --bundle --minify --format=iife --target=es2020 --charset=utf8 \
    --legal-comments=none --metafile="$tmp/meta.json" --outfile="$tmp/editor.js" --log-level=warning
{
    printf '/*! AscendSim code editor (CodeMirror 6, MIT: see editor.bundle.LICENSE.txt). '
    printf 'Built by app/web/editor/build.sh; do not edit. sources-sha256=%s */\n' "$digest"
    cat "$tmp/editor.js"
} >"$assets/editor.bundle.js"
node notice.js "$tmp/meta.json" >"$assets/editor.bundle.LICENSE.txt"
bytes=$(wc -c <"$assets/editor.bundle.js")
gzipped=$(gzip -9c "$assets/editor.bundle.js" | wc -c)
echo "editor.bundle.js: $bytes bytes ($gzipped gzipped), sources-sha256=$digest"
