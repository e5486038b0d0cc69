#!/usr/bin/env bash
# The breaking-change gate: fails when SPEC would break a client of the released BASELINE
# (a removed or renamed field, a new required request field, a narrowed type, a removed status or
# operation), unless SPEC's info.version has a greater major version than BASELINE's.
#
#   bash scripts/check-breaking-changes.sh [SPEC [BASELINE]]
#
# SPEC defaults to openapi.yaml and BASELINE to contract/released/openapi.yaml, the spec of the
# last release. When a release is cut, record its spec as the new baseline and commit it:
#
#   bash scripts/record-released-spec.sh [GIT_REF]
#
# Optic (`optic diff` with its breaking-changes ruleset, scripts/check-breaking-changes.optic.yml)
# finds the breaks, and find-narrowed-request-constraints.mjs the narrowed request constraints
# Optic does not compare (maxLength, minimum, pattern, format, ...); this script applies the
# version rule. A reported change listed in accepted-changes.yaml beside BASELINE, with why no
# client of that release is broken by it (the spec now says what the service already did), is
# shown but does not fail. Exit status: 0 when SPEC passes, 1 when it breaks clients without a
# new major version (or its version goes back), 2 when the gate could not run.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
prefix=$([ "$PWD" = "$root" ] || echo "$root/")

case "${1:-}" in
  -h | --help) sed -n '2,16s/^# \{0,1\}//p' "$0"; exit 0 ;;
esac
if [ $# -gt 2 ]; then
  echo "usage: bash scripts/check-breaking-changes.sh [SPEC [BASELINE]]" >&2
  exit 2
fi
spec=${1:-${prefix}openapi.yaml}
baseline=${2:-${prefix}contract/released/openapi.yaml}
for file in "$spec" "$baseline"; do
  [ -f "$file" ] || { echo "breaking-change gate: $file does not exist" >&2; exit 2; }
done
accepted_file=$(dirname "$baseline")/accepted-changes.yaml

# The accepted changes, one a line as the gate reports them; each must say why.
accepted=$(GATE_ROOT=$root node -e '
  const { existsSync, readFileSync } = require("node:fs")
  const YAML = require(require.resolve("yaml", { paths: [process.env.GATE_ROOT] }))
  const file = process.argv[1]
  const entries = existsSync(file) ? YAML.parse(readFileSync(file, "utf8")) ?? [] : []
  for (const entry of entries) {
    if (typeof entry?.change !== "string" || typeof entry?.why !== "string" || entry.why.trim() === "") {
      throw new Error(`every entry needs a change and a why: ${JSON.stringify(entry)}`)
    }
    console.log(entry.change)
  }
' "$accepted_file") || { echo "breaking-change gate: could not read $accepted_file" >&2; exit 2; }

# info.version of each file, one a line; the project's own YAML reader, so no one parses by hand.
versions=$(GATE_ROOT=$root node -e '
  const { readFileSync } = require("node:fs")
  const YAML = require(require.resolve("yaml", { paths: [process.env.GATE_ROOT] }))
  for (const file of process.argv.slice(1)) console.log(String(YAML.parse(readFileSync(file, "utf8"))?.info?.version))
' "$spec" "$baseline") || { echo "breaking-change gate: could not read info.version" >&2; exit 2; }
spec_version=$(sed -n 1p <<<"$versions")
baseline_version=$(sed -n 2p <<<"$versions")

major_of () {
  [[ $1 =~ ^([0-9]+)\.[0-9]+\.[0-9]+([-+].*)?$ ]] && echo "${BASH_REMATCH[1]}"
}
spec_major=$(major_of "$spec_version") || {
  echo "$spec: info.version \"$spec_version\" is not MAJOR.MINOR.PATCH, so the gate cannot tell a breaking release" >&2
  exit 1
}
baseline_major=$(major_of "$baseline_version") || {
  echo "$baseline: info.version \"$baseline_version\" is not MAJOR.MINOR.PATCH" >&2
  exit 2
}
if [ "$spec_major" -lt "$baseline_major" ]; then
  echo "$spec: info.version $spec_version goes back from the released $baseline_version" >&2
  exit 1
fi

echo "Breaking-change gate: $spec ($spec_version) against the released $baseline ($baseline_version)"
echo

report=$(mktemp)
errors=$(mktemp)
trap 'rm -f "$report" "$errors"' EXIT
# CI unset: in CI mode Optic writes ci-run-details.json into the working directory.
env -u CI OPTIC_TELEMETRY_LEVEL=off NO_UPDATE_NOTIFIER=1 \
  "$root/node_modules/.bin/optic" diff "$baseline" "$spec" --check \
  --standard "$root/scripts/check-breaking-changes.optic.yml" >"$report" 2>"$errors"
optic_status=$?
grep -v -- '--web flag' "$report"

# Anything on stderr (an unreadable or invalid spec, a ruleset that did not load) means the
# checks may not have run: fail closed.
if [ -s "$errors" ]; then
  cat "$errors" >&2
  echo "breaking-change gate: optic diff did not run cleanly (exit status $optic_status)" >&2
  exit 2
fi
narrowed=$(node "$root/scripts/find-narrowed-request-constraints.mjs" "$baseline" "$spec") || {
  echo "breaking-change gate: could not compare the request constraints" >&2
  exit 2
}
no_break () {
  echo "No breaking change: every client of $baseline_version works with $spec."
  exit 0
}
if [ "$optic_status" -eq 0 ] && [ -z "$narrowed" ]; then no_break; fi

# One line per failed check: the operation it is under, the rule and message, and where. A removed
# operation also fails a check for each of its statuses and fields: its removal alone is shown.
breaks=$(awk '
  /^(✔|x) [A-Z]+ \// { operation = $2 " " $3; sub(/:$/, "", operation) }
  /^ *x \[/ {
    check = $0; sub(/^ *x /, "", check)
    where = ""
    if ((getline next_line) > 0 && next_line ~ /^ *at /) { where = next_line; sub(/^ *at /, "", where) }
    if (operation == "") operation = "(document)"
    line = "  " operation ": " check (where == "" ? "" : " (" where ")")
    if (seen[line]++) next
    lines[++count] = line; operation_of[count] = operation
    if (check ~ /^\[prevent operation removal\]/) removed[operation] = count
  }
  END {
    for (i = 1; i <= count; i++) {
      if (operation_of[i] in removed && removed[operation_of[i]] != i) continue
      print lines[i]
    }
  }
' "$report")
if [ "$optic_status" -ne 0 ] && [ -z "$breaks" ]; then
  echo "breaking-change gate: optic diff failed (exit status $optic_status) without naming a breaking change" >&2
  exit 2
fi
breaks=$(printf '%s\n%s' "$breaks" "$narrowed" | sed '/^$/d')

# Set aside what accepted-changes.yaml accepts, matched without Optic's file position.
unaccepted=""
acknowledged=""
while IFS= read -r line; do
  change=$(sed -E 's/^ +//; s/ \([^()]*:[0-9]+:[0-9]+\)$//' <<<"$line")
  if grep -qxF -- "$change" <<<"$accepted"; then
    acknowledged+="$line"$'\n'
  else
    unaccepted+="$line"$'\n'
  fi
done <<<"$breaks"
if [ -n "$acknowledged" ]; then
  echo
  echo "Reported, and accepted in $accepted_file as breaking no client of $baseline_version:"
  printf '%s' "$acknowledged"
fi
if [ -z "$unaccepted" ]; then no_break; fi
breaks=${unaccepted%$'\n'}

echo
if [ "$spec_major" -gt "$baseline_major" ]; then
  echo "$spec breaks clients of $baseline_version, as its new major version $spec_version says it may:"
  echo "$breaks"
  echo "Allowed. When $spec_version is released, record it: bash scripts/record-released-spec.sh"
  exit 0
fi
echo "BREAKING: $spec would break clients of the released $baseline_version:"
echo "$breaks"
echo "Undo these changes, or, if the break is meant, release it as a new major version:"
echo "set info.version in $spec to $((baseline_major + 1)).0.0."
exit 1
