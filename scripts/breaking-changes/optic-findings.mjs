// The breaks Optic's breaking-changes ruleset (check-breaking-changes.optic.yml) finds in the
// operations under `paths`, each as { change, path }: the change as "<operation>: <check>", and
// the path in the spec where it is. Optic does not compare `webhooks`: webhook-breaks.mjs does.
import { execFile } from 'node:child_process'
import { join, resolve as resolvePath } from 'node:path'
import { promisify } from 'node:util'
import { resolve } from './resolve-ref.mjs'

const run = promisify(execFile)

export async function opticFindings (root, baseline, spec) {
  let output
  try {
    // CI unset: in CI mode Optic writes ci-run-details.json into the working directory.
    const env = { ...process.env, OPTIC_TELEMETRY_LEVEL: 'off', NO_UPDATE_NOTIFIER: '1' }
    delete env.CI
    output = await run(join(root, 'node_modules', '.bin', 'optic'), [
      'diff', baseline.file, spec.file, '--check', '--standard', join(root, 'scripts', 'check-breaking-changes.optic.yml'),
    ], { cwd: root, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  } catch (error) {
    output = error
  }
  const { stdout = '', stderr = '', code = 0 } = output
  // Anything on stderr (an unreadable or invalid spec, a ruleset that did not load) means the
  // checks may not have run: fail closed.
  if (stderr.trim() !== '' || (code !== 0 && code !== 1)) {
    throw new Error(`optic diff did not run cleanly (exit status ${code}):\n${stderr}`)
  }
  const findings = parseOpticReport(stdout, root, baseline, spec)
  if (code !== 0 && findings.length === 0) throw new Error(`optic diff failed (exit status ${code}) without naming a breaking change`)
  return findings
}

// Optic's report nests each failed check ("x [rule] message", then "at FILE:LINE:OFFSET") under
// the operation, the request or response, the media type and the property it is about.
function parseOpticReport (report, root, baseline, spec) {
  const findings = []
  const lines = report.split('\n')
  let context = {}
  for (const [index, line] of lines.entries()) {
    const heading = /^(?:✔|x) ([A-Z]+ \/\S*):/.exec(line)
    if (heading !== null) context = { operation: heading[1] }
    const section = /^ {2}- (request|response (\S+)|.*parameter .*):(.*)$/.exec(line)
    if (section !== null) context = { operation: context.operation, section: section[1].split(' ')[0], status: section[2], removed: section[3].trim() === 'removed' }
    const body = /^ {4}- body (\S+):/.exec(line)
    if (body !== null) context = { ...context, mediaType: body[1], pointer: undefined }
    const property = /^ {6}- property (\S*):/.exec(line)
    if (property !== null) context = { ...context, pointer: property[1] }

    const check = /^ *x (\[[^\]]+\] .*?)(?:\. This is a breaking change\.)?$/.exec(line)
    if (check === null) continue
    const operation = context.operation ?? '(document)'
    const at = /^ *at (.*):(\d+):(\d+)$/.exec(lines[index + 1] ?? '')
    // Optic names the file relative to its working directory.
    const file = at === null ? undefined : resolvePath(root, at[1])
    let path = pathInSpec(spec, context)
    if (file === spec.file) {
      path = spec.pathAtOffset(Number(at[3]))
    } else if (file === baseline.file) {
      // Where a removed thing was: the spec cites the nearest part of that path it still has. A
      // path the spec still has whole was removed where it was referred to, which is the context.
      const wasAt = baseline.pathAtOffset(Number(at[3]))
      if (!spec.has(wasAt)) path = wasAt
    }
    findings.push({ change: `${operation}: ${check[1]}`, operation, status: context.removed ? context.status : undefined, path })
  }
  // A removed operation also fails a check for each of its statuses and fields, and a removed
  // status for each of its fields: the removal alone is shown.
  const removedOperations = new Set(findings.filter(({ change }) => change.includes('[prevent operation removal]')).map(({ operation }) => operation))
  const seen = new Set()
  return findings.filter(({ change, operation, status }) => {
    if (removedOperations.has(operation) && !change.includes('[prevent operation removal]')) return false
    if (status !== undefined && !change.includes('[prevent response status code removal]')) return false
    if (seen.has(change)) return false
    seen.add(change)
    return true
  }).map(({ change, path }) => ({ change, path }))
}

// Where the spec holds what a check is about, following $refs: a request body's property is
// cited at the schema that declares it, wherever that is.
function pathInSpec (spec, { operation, section, status, mediaType, pointer }) {
  const [method, route] = (operation ?? '').split(' ')
  if (route === undefined) return []
  const path = ['paths', route, method.toLowerCase()]
  if (section === 'request') path.push('requestBody')
  else if (section === 'response') path.push('responses', status)
  else return path
  if (mediaType !== undefined) {
    path.push('content', mediaType)
    for (const key of (pointer ?? '/schema').split('/').slice(1)) path.push(key.replaceAll('~1', '/').replaceAll('~0', '~'))
  }
  return follow(spec, spec.value, [], path).path
}

// The path of `rest` from `node` (at `at`) through $refs and allOf parts: where it is, or where
// its nearest part is, with what was not found after it.
function follow (spec, node, at, rest, seen = new Set()) {
  if (rest.length === 0) return { path: at, missing: 0 }
  const [key, ...more] = rest
  const ways = []
  if (node?.[key] !== undefined) {
    const next = resolve(spec.value, node[key])
    ways.push(follow(spec, next, spec.pathOf(next) ?? [...at, key], more))
  }
  // A schema made of allOf parts has its properties in one of them.
  for (const part of (node?.allOf ?? []).map((part) => resolve(spec.value, part)).filter((part) => !seen.has(part))) {
    ways.push(follow(spec, part, spec.pathOf(part) ?? at, rest, new Set([...seen, part])))
  }
  ways.push({ path: [...at, ...rest], missing: rest.length })
  return ways.reduce((best, way) => way.missing < best.missing ? way : best)
}
