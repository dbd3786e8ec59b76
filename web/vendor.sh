#!/usr/bin/env bash
# Refresh the JavaScript that `mathgraph serve`'s page ships, from the npm registry, pinned by
# package-lock.json: the page loads it from the package, never from a CDN. Commit what this changes.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
vendor=../mathgraph/serve/static/vendor
cp node_modules/cytoscape/dist/cytoscape.min.js "$vendor/cytoscape.min.js"
cp node_modules/cytoscape/LICENSE "$vendor/cytoscape.LICENSE"
echo "cytoscape $(node -p 'require("./node_modules/cytoscape/package.json").version') copied to $vendor"
