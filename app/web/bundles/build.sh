#!/usr/bin/env bash
# Builds the dashboard's JavaScript bundles from the exact packages of package-lock.json and the sources in
# src/: `npm ci`, then esbuild (build.js: one minified IIFE each, no imports, nothing fetched at run time):
#   app/web/assets/editor.bundle.js  the Exercise panel's code editor (CodeMirror 6)
#   app/web/assets/plotly.bundle.js  plotly.js with the trace types the figures draw (src/plotly.js)
#   app/web/assets/regenerator.bundle.js  what Dash's bundles need of @babel/polyfill (src/regenerator.js)
# and NAME.bundle.LICENSE.txt beside each. Each bundle's first line records a sha256 of this folder's inputs
# (tests/test_web_bundles.py recomputes it without Node: rebuild after changing any of them).
# Needs Node 20 and npm; the built files are committed, so installing ascendsim needs neither.
set -euo pipefail
cd "$(dirname "$0")"
assets=../assets
inputs=(build.js build.sh notice.js package.json package-lock.json)
mapfile -t sources < <(find src -type f | LC_ALL=C sort)
inputs+=("${sources[@]}")
digest=$(sha256sum "${inputs[@]}" | sha256sum | cut -d' ' -f1)

npm ci --no-audit --no-fund --loglevel=error
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A what=(
    [editor]="AscendSim code editor (CodeMirror 6, MIT"
    [plotly]="plotly.js for AscendSim (bar, heatmap, scatter, scattergl; MIT"
    [regenerator]="regenerator-runtime for Dash's bundles (MIT"
)
for name in editor plotly regenerator; do
    node build.js "$name" "$tmp/$name.js" "$tmp/$name.meta.json"
    {
        printf '/*! %s: see %s.bundle.LICENSE.txt). ' "${what[$name]}" "$name"
        printf 'Built by app/web/bundles/build.sh; do not edit. sources-sha256=%s */\n' "$digest"
        cat "$tmp/$name.js"
    } >"$assets/$name.bundle.js"
    node notice.js "$tmp/$name.meta.json" "$name.bundle.js" >"$assets/$name.bundle.LICENSE.txt"
    bytes=$(wc -c <"$assets/$name.bundle.js")
    gzipped=$(gzip -9c "$assets/$name.bundle.js" | wc -c)
    echo "$name.bundle.js: $bytes bytes ($gzipped gzipped), sources-sha256=$digest"
done
