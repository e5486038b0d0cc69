#!/usr/bin/env bash
# Fails when generated/ is not what `npm run generate` writes from openapi.yaml: the spec
# changed and the types were not regenerated and committed, or someone edited generated/.
set -euo pipefail
cd "$(dirname "$0")/.."
npm run --silent generate >/dev/null 2>&1
if ! git diff --exit-code -- generated/ || [ -n "$(git status --porcelain -- generated/)" ]; then
  echo "generated/ differs from what openapi.yaml generates: run 'npm run generate' and commit the result." >&2
  exit 1
fi
echo "generated/ matches openapi.yaml"
