#!/usr/bin/env bash
# Fails when generated/ is not what it should be, and says which of the two drifts it is:
#   - "generated/ is not what openapi.yaml generates": the spec changed and `npm run generate`
#     was not run, or someone edited generated/. Run npm run generate.
#   - "generated/ was regenerated but not committed": the files are right, git does not have them.
# In the first case generated/ is put back as it was found: a check does not rewrite the files it
# checks (an editor may hold them, a change may be half done), and the fix is the command it names.
# Exit status: 0 when generated/ matches openapi.yaml and is committed, 1 on a drift, 2 when
# `npm run generate` fails.
set -euo pipefail
cd "$(dirname "$0")/.."

found=$(mktemp -d)
trap 'rm -rf "$found"' EXIT
[ -d generated ] && cp -a generated/. "$found/"
if ! npm run --silent generate >"$found.log" 2>&1; then
  cat "$found.log" >&2; rm -f "$found.log"
  echo "check-generated: npm run generate failed" >&2
  exit 2
fi
rm -f "$found.log"

if ! diff -r -q "$found" generated >/dev/null; then
  rm -rf generated
  mkdir generated
  cp -a "$found/." generated/
  echo "generated/ is not what openapi.yaml generates: run npm run generate (and commit the result)" >&2
  exit 1
fi
if ! git diff --quiet HEAD -- generated/ || [ -n "$(git status --porcelain -- generated/)" ]; then
  git status --short -- generated/ >&2
  echo "generated/ was regenerated but not committed: commit it" >&2
  exit 1
fi
echo "generated/ matches openapi.yaml and is committed"
