// The breaks Optic's breaking-changes ruleset (check-breaking-changes.optic.yml) finds in the
// operations under `paths`, each as { change, path }: the change as "<operation>: <check>", the
// path where it is in the spec, or, for something removed, where it was in the baseline (the spec
// file cites the nearest part of that path it still has). Optic does not compare `webhooks`:
// webhook-breaks.mjs does.
import { execFile } from 'node:child_process'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'

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

function parseOpticReport (report, root, baseline, spec) {
  const findings = []
  const lines = report.split('\n')
  let operation = '(document)'
  for (const [index, line] of lines.entries()) {
    const heading = /^(?:✔|x) ([A-Z]+ \/\S*):/.exec(line)
    if (heading !== null) operation = heading[1]
    const check = /^ *x (\[[^\]]+\] .*?)(?:\. This is a breaking change\.)?$/.exec(line)
    if (check === null) continue
    const at = /^ *at (.*):(\d+):(\d+)$/.exec(lines[index + 1] ?? '')
    // Optic names the file relative to its working directory.
    const file = at === null ? undefined : resolve(root, at[1])
    const offset = Number(at?.[3])
    const path = file === spec.file
      ? spec.pathAtOffset(offset)
      : file === baseline.file ? baseline.pathAtOffset(offset) : []
    findings.push({ change: `${operation}: ${check[1]}`, operation, path })
  }
  // A removed operation also fails a check for each of its statuses and fields: its removal alone is shown.
  const removed = new Set(findings.filter(({ change }) => change.includes('[prevent operation removal]')).map(({ operation }) => operation))
  const seen = new Set()
  return findings.filter(({ change, operation }) => {
    if (removed.has(operation) && !change.includes('[prevent operation removal]')) return false
    if (seen.has(change)) return false
    seen.add(change)
    return true
  }).map(({ change, path }) => ({ change, path }))
}
