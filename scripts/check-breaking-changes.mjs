// The breaking-change gate (`npm run check:breaking`): fails when SPEC would break what consumers
// have, unless its info.version is a new major version.
//
//   node scripts/check-breaking-changes.mjs [SPEC [RELEASED]]
//
// SPEC (openapi.yaml by default) is compared with RELEASED (contract/released/openapi.yaml, the
// spec of the last release, recorded by `npm run release`) and with openapi.yaml as it is at the
// merge-base with main, so that an operation added since the release but already on main is kept
// too. On main, or without git or a main branch, only the release is compared, and the output
// says so. Optic (optic-findings.mjs) compares the operations; narrowed-request-constraints.mjs
// the request constraints Optic does not; webhook-breaks.mjs the webhooks, which Optic does not
// compare at all. A change listed in accepted-changes.yaml beside RELEASED, with why it breaks no
// consumer, is set aside.
//
// The first line is the verdict and the version the change needs; then each break, cited at its
// line of SPEC. Exit status: 0 when SPEC passes, 1 when it breaks consumers without a new major
// version (or its version is not MAJOR.MINOR.PATCH, or goes back), 2 when the gate could not run.
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'
import process from 'node:process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { parse } from 'yaml'
import { narrowedRequestConstraints } from './breaking-changes/narrowed-request-constraints.mjs'
import { opticFindings } from './breaking-changes/optic-findings.mjs'
import { readSpecFile } from './breaking-changes/spec-file.mjs'
import { compareVersions, parseVersion } from './breaking-changes/semantic-version.mjs'
import { webhookBreaks } from './breaking-changes/webhook-breaks.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const run = promisify(execFile)

class GateCannotRun extends Error {}

function say (line) {
  process.stdout.write(`${line}\n`)
}

function shown (file) {
  const path = relative(process.cwd(), file)
  return path.startsWith('..') || isAbsolute(path) ? file : path
}

// Each entry says which change it accepts, as the gate reports it, and why no consumer breaks.
function acceptedChanges (file) {
  if (!existsSync(file)) return new Set()
  const entries = parse(readFileSync(file, 'utf8')) ?? []
  for (const entry of entries) {
    if (typeof entry?.change !== 'string' || typeof entry?.why !== 'string' || entry.why.trim() === '') {
      throw new GateCannotRun(`${shown(file)}: every entry needs a change and a why: ${JSON.stringify(entry)}`)
    }
  }
  return new Set(entries.map(({ change }) => change))
}

async function git (...args) {
  const { stdout } = await run('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  return stdout
}

// openapi.yaml as it was at the merge-base with main, or why there is none to compare with.
async function specAtMergeBase () {
  let top
  try {
    top = (await git('rev-parse', '--show-toplevel')).trim()
  } catch {
    return { why: 'not in a git repository' }
  }
  const branch = (await git('rev-parse', '--abbrev-ref', 'HEAD').catch(() => '')).trim()
  if (branch === 'main') return { why: 'on main itself' }
  let main
  for (const candidate of ['main', 'origin/main']) {
    if (await git('rev-parse', '--verify', '--quiet', `${candidate}^{commit}`).then(() => true, () => false)) {
      main = candidate
      break
    }
  }
  if (main === undefined) return { why: 'there is no main branch' }
  try {
    const commit = (await git('merge-base', 'HEAD', main)).trim()
    const path = relative(top, join(root, 'openapi.yaml')).split('\\').join('/')
    return { main, commit, text: await git('show', `${commit}:${path}`) }
  } catch {
    return { why: `${main} has no openapi.yaml in common with HEAD` }
  }
}

async function breaksAgainst (baseline, spec) {
  return [
    ...await opticFindings(root, baseline, spec),
    ...narrowedRequestConstraints(baseline, spec),
    ...webhookBreaks(baseline, spec),
  ]
}

async function gate (specArgument, releasedArgument) {
  const specFile = resolve(specArgument ?? join(root, 'openapi.yaml'))
  const releasedFile = resolve(releasedArgument ?? join(root, 'contract', 'released', 'openapi.yaml'))
  const acceptedFile = join(dirname(releasedFile), 'accepted-changes.yaml')
  for (const file of [specFile, releasedFile]) {
    if (!existsSync(file)) throw new GateCannotRun(`${shown(file)} does not exist`)
  }
  const spec = readSpecFile(specFile)
  const released = readSpecFile(releasedFile)
  const accepted = acceptedChanges(acceptedFile)

  const specVersion = parseVersion(spec.version)
  if (specVersion === undefined) {
    say(`BREAKING: info.version "${spec.version}" is not MAJOR.MINOR.PATCH, so the gate cannot tell a breaking release`)
    return 1
  }
  const releasedVersion = parseVersion(released.version)
  if (releasedVersion === undefined) throw new GateCannotRun(`${shown(releasedFile)}: info.version "${released.version}" is not MAJOR.MINOR.PATCH`)
  if (compareVersions(specVersion, releasedVersion) < 0) {
    say(`BREAKING: info.version ${spec.version} goes back from the released ${released.version}`)
    return 1
  }

  const baselines = [{ name: `the release ${released.version}`, spec: released }]
  const atMergeBase = await specAtMergeBase()
  let compared
  let scratch
  try {
    if (atMergeBase.text === undefined) {
      compared = `Compared with the release ${released.version} (${shown(releasedFile)}) only: ${atMergeBase.why}.`
    } else if (atMergeBase.text === released.text) {
      compared = `Compared with the release ${released.version} (${shown(releasedFile)}), which is also openapi.yaml at the merge-base with ${atMergeBase.main} (${atMergeBase.commit.slice(0, 7)}).`
    } else {
      // Optic reads files: the merge-base's spec is written to one of its own.
      scratch = mkdtempSync(join(tmpdir(), 'breaking-change-gate-'))
      const file = join(scratch, 'openapi.yaml')
      writeFileSync(file, atMergeBase.text)
      const mainSpec = readSpecFile(file, atMergeBase.text)
      baselines.push({ name: atMergeBase.main, spec: mainSpec })
      compared = `Compared with the release ${released.version} (${shown(releasedFile)}) and with openapi.yaml at the merge-base with ${atMergeBase.main} (${atMergeBase.commit.slice(0, 7)}, ${mainSpec.version}).`
    }

    // One break found against both baselines is shown once, naming both only when they differ.
    const breaks = new Map()
    // One Optic run at a time: it takes a core for seconds.
    for (const baseline of baselines) {
      for (const { change, path } of await breaksAgainst(baseline.spec, spec)) {
        const found = breaks.get(change) ?? { change, line: spec.lineOf(path), against: [] }
        found.against.push(baseline.name)
        breaks.set(change, found)
      }
    }
    const setAside = [...breaks.values()].filter(({ change }) => accepted.has(change))
    const unaccepted = [...breaks.values()].filter(({ change }) => !accepted.has(change)).sort((a, b) => a.line - b.line)

    const needed = `${releasedVersion.major + 1}.0.0`
    const allowed = specVersion.major > releasedVersion.major
    if (unaccepted.length === 0) {
      say(`No breaking change: ${spec.version} is enough`)
    } else if (allowed) {
      say(`Breaking change, allowed: ${spec.version} is a new major version (needs ${needed})`)
    } else {
      say(`BREAKING: needs ${needed} (info.version is ${spec.version})`)
    }
    for (const { change, line, against } of unaccepted) {
      const only = baselines.length > 1 && against.length < baselines.length ? ` (against ${against.join(' and ')} only)` : ''
      say(`${shown(specFile)}:${line}: ${change}${only}`)
    }
    say(compared)
    if (setAside.length > 0) say(`Set aside ${setAside.length} reported change${setAside.length === 1 ? '' : 's'} accepted in ${shown(acceptedFile)}.`)
    if (unaccepted.length > 0 && !allowed) {
      say(`Undo these changes or, if the break is meant, release it as a new major version: npm run release -- major (info.version ${needed}).`)
      return 1
    }
    return 0
  } finally {
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true })
  }
}

const args = process.argv.slice(2)
if (args[0] === '-h' || args[0] === '--help') {
  // The comment this file opens with.
  const lines = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n')
  const comment = lines.slice(0, lines.findIndex((line) => !line.startsWith('//')))
  process.stdout.write(comment.map((line) => line.replace(/^\/\/ ?/, '')).join('\n') + '\n')
  process.exit(0)
}
if (args.length > 2) {
  process.stderr.write('usage: node scripts/check-breaking-changes.mjs [SPEC [RELEASED]]\n')
  process.exit(2)
}
try {
  process.exitCode = await gate(args[0], args[1])
} catch (error) {
  process.stderr.write(`breaking-change gate: ${error instanceof GateCannotRun ? '' : 'could not run: '}${error.message}\n`)
  process.exitCode = 2
}
