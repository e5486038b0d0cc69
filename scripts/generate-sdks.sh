#!/usr/bin/env bash
# `npm run sdk`: clients of openapi.yaml for the API's consumers, in Python, Java, Go and
# TypeScript (fetch), written by the design card's OpenAPI Generator into sdk/ (git-ignored).
#
#   bash scripts/generate-sdks.sh
#
# The generators and their options are openapitools.json's; each client's version is
# openapi.yaml's info.version. Needs Java 11 or later, and Maven the first time (the generator's
# JAR comes from Maven Central: scripts/provision-openapi-generator.sh). Each client's README
# starts with how a consumer installs it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# The wrapper reads openapitools.json from the working directory ($PWD).
cd "$root"

case "${1:-}" in
  -h | --help) sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0 ;;
esac

bash scripts/provision-openapi-generator.sh >/dev/null
API_VERSION=$(node -e '
  const YAML = require("yaml")
  console.log(YAML.parse(require("node:fs").readFileSync("openapi.yaml", "utf8")).info.version)
')
export API_VERSION

rm -rf sdk/python sdk/java sdk/go sdk/typescript
mkdir -p sdk
# The generators read openapi.yaml without its `webhooks`: they describe what the service sends to
# a consumer's endpoint, not what a client calls, and OpenAPI Generator 7 writes them as client
# methods that do not build (Python: a syntax error; TypeScript: duplicate identifiers). The
# webhooks' body schemas stay, as models (NewPlantEvent, PlantDeletedEvent) a receiver can parse
# a body into after verifying it (docs/webhooks.md).
node -e '
  const YAML = require("yaml")
  const fs = require("node:fs")
  const { webhooks, ...document } = YAML.parse(fs.readFileSync("openapi.yaml", "utf8"))
  fs.writeFileSync("sdk/openapi-for-generators.yaml", YAML.stringify(document))
'
log=sdk/generate.log
# The generator logs every file it writes; its log is kept, and shown when it fails.
if ! JAVA_OPTS="-Dlog.level=warn" node_modules/.bin/openapi-generator-cli generate >"$log" 2>&1; then
  cat "$log" >&2
  echo "npm run sdk: the generator failed (its output is above, and in $log)" >&2
  exit 1
fi

# The line a consumer needs first, above what the generator wrote (whose install lines name a
# git repository that does not exist).
prepend_install () {
  local readme=$1 text=$2 with_install
  with_install=$(mktemp)
  { printf '%s\n\n' "$text"; cat "$readme"; } >"$with_install"
  mv "$with_install" "$readme"
}
prepend_install sdk/python/README.md "**Install:** \`pip install $root/sdk/python\` (Python 3.10 or later), then \`import plant_store_client\`."
prepend_install sdk/java/README.md "**Install:** \`mvn -f $root/sdk/java/pom.xml install -DskipTests\` (Java 8 or later), then depend on \`org.plantstore:plant-store-client:$API_VERSION\`."
prepend_install sdk/go/README.md "**Install:** in your module, \`go mod edit -require=plant-store/sdk/go@v0.0.0 -replace=plant-store/sdk/go=$root/sdk/go\`, then \`import plantstore \"plant-store/sdk/go\"\`."
prepend_install sdk/typescript/README.md "**Install:** \`(cd $root/sdk/typescript && npm install && npm pack)\` (which builds and packs it), then \`npm install $root/sdk/typescript/plant-store-client-$API_VERSION.tgz\` and \`import { PlantsApi } from 'plant-store-client'\`. Ids are JavaScript numbers: see the Plant Store's docs/sdks.md on ids above 2^53."

echo "Generated sdk/python, sdk/java, sdk/go and sdk/typescript from openapi.yaml $API_VERSION" \
  "with OpenAPI Generator $(node -p 'require("./openapitools.json")["generator-cli"].version')." \
  "The first line of each one's README.md says how to install it."
