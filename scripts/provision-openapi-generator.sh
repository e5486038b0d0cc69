#!/usr/bin/env bash
# Puts the OpenAPI Generator JAR where @openapitools/openapi-generator-cli looks for it, so that
# the wrapper downloads nothing (its own download comes from a host these machines do not reach).
#
#   bash scripts/provision-openapi-generator.sh
#
# The version and the folder are openapitools.json's `generator-cli.version` and `storageDir`.
# The JAR is the Maven Central artifact org.openapitools:openapi-generator-cli, fetched with
# `mvn dependency:copy`. Prints the JAR's path. Exit status 1 when Java or Maven is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

case "${1:-}" in
  -h | --help) sed -n '2,9s/^# \{0,1\}//p' "$0"; exit 0 ;;
esac

missing () {
  echo "$1 is needed to generate the SDKs, and was not found on PATH." >&2
  echo "Install it (on Debian or Ubuntu: $2), then run this again." >&2
  exit 1
}
# The generator runs on Java 11 or later.
command -v java >/dev/null || missing "Java (11 or later)" "apt-get install default-jdk-headless"

read -r version storage_dir < <(node -e '
  const settings = require(process.argv[1])["generator-cli"]
  console.log(settings.version, settings.storageDir)
' "$root/openapitools.json")
jar="$root/$storage_dir/$version.jar"
if [ -s "$jar" ]; then
  echo "$jar"
  exit 0
fi

command -v mvn >/dev/null || missing "Maven" "apt-get install maven"
download=$(mktemp -d)
trap 'rm -rf "$download"' EXIT
echo "fetching org.openapitools:openapi-generator-cli:$version from Maven Central" >&2
mvn --batch-mode --quiet -Dstyle.color=never dependency:copy \
  "-Dartifact=org.openapitools:openapi-generator-cli:$version:jar" "-DoutputDirectory=$download" >&2
mkdir -p "$(dirname "$jar")"
# Renamed into place only when whole, so that an interrupted fetch is never taken for a JAR.
mv "$download/openapi-generator-cli-$version.jar" "$jar.partial"
mv "$jar.partial" "$jar"
echo "$jar"
