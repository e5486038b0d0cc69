#!/usr/bin/env bash
# Records the spec of a release as contract/released/openapi.yaml, the baseline that
# check-breaking-changes.sh compares openapi.yaml with. Run it when a release is cut, then commit
# the file:
#
#   bash scripts/record-released-spec.sh [GIT_REF]
#
# GIT_REF (a tag or commit, HEAD by default) is the release: its committed openapi.yaml is recorded,
# and the changes accepted against the previous release (accepted-changes.yaml) are cleared.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  -h | --help) sed -n '2,9s/^# \{0,1\}//p' "$0"; exit 0 ;;
esac
ref=${1:-HEAD}
baseline=contract/released/openapi.yaml
accepted=contract/released/accepted-changes.yaml

mkdir -p "$(dirname "$baseline")"
recorded=$(mktemp)
trap 'rm -f "$recorded"' EXIT
git show "$ref:openapi.yaml" >"$recorded"
cp "$recorded" "$baseline"
if [ -f "$accepted" ]; then
  # Its explanatory comment stays; its entries were about the release before.
  { grep '^#' "$accepted" || true; echo '[]'; } >"$recorded"
  cp "$recorded" "$accepted"
fi
version=$(node -e '
  const YAML = require("yaml")
  console.log(YAML.parse(require("node:fs").readFileSync(process.argv[1], "utf8"))?.info?.version)
' "$baseline")
echo "recorded openapi.yaml as of $ref (info.version $version) in $baseline, and cleared $accepted: commit them"
