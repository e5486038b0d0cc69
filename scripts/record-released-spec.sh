#!/usr/bin/env bash
# Records the spec of a release as contract/released/openapi.yaml, the baseline that
# check-breaking-changes.sh compares openapi.yaml with. Run it when a release is cut, then commit
# the file:
#
#   bash scripts/record-released-spec.sh [GIT_REF]
#
# GIT_REF (a tag or commit, HEAD by default) is the release: its committed openapi.yaml is recorded.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  -h | --help) sed -n '2,8s/^# \{0,1\}//p' "$0"; exit 0 ;;
esac
ref=${1:-HEAD}
baseline=contract/released/openapi.yaml

mkdir -p "$(dirname "$baseline")"
recorded=$(mktemp)
trap 'rm -f "$recorded"' EXIT
git show "$ref:openapi.yaml" >"$recorded"
cp "$recorded" "$baseline"
version=$(node -e '
  const YAML = require("yaml")
  console.log(YAML.parse(require("node:fs").readFileSync(process.argv[1], "utf8"))?.info?.version)
' "$baseline")
echo "recorded openapi.yaml as of $ref (info.version $version) in $baseline: commit it"
