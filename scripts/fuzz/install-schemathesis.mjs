// The one installer of Schemathesis, for `npm run fuzz` (test/fuzz/schemathesis.ts) and
// `npm run check:conformance` (scripts/check-conformance.mjs): a virtualenv in
// .tools/schemathesis that holds exactly scripts/fuzz/requirements.txt (pinned with hashes, from
// PyPI), made anew whenever that file changes. Returns the path of the schemathesis executable.
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const projectRoot = fileURLToPath(new URL('../..', import.meta.url))
const requirements = join(projectRoot, 'scripts', 'fuzz', 'requirements.txt')
const venv = join(projectRoot, '.tools', 'schemathesis')
const executable = join(venv, 'bin', 'schemathesis')
// What requirements.txt held when the virtualenv was made.
const stamp = join(venv, 'requirements.sha256')

// Where Schemathesis' settings for a run against the service are kept.
export const schemathesisSettings = join(projectRoot, 'scripts', 'fuzz', 'schemathesis.toml')

// `onInstall` is told once, before a (slow) installation starts.
export async function installSchemathesis ({ onInstall = () => {} } = {}) {
  const digest = createHash('sha256').update(readFileSync(requirements)).digest('hex')
  if (existsSync(executable) && existsSync(stamp) && readFileSync(stamp, 'utf8') === digest) return executable

  onInstall(venv)
  rmSync(venv, { recursive: true, force: true })
  const steps = [
    ['python3', ['-m', 'venv', venv]],
    [join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', '--require-hashes', '-r', requirements]],
  ]
  for (const [file, args] of steps) {
    const { failure, output } = await run(file, args)
    if (failure !== undefined) {
      throw new Error(`${[file, ...args].join(' ')} failed (${failure}); Schemathesis needs Python 3.9 or ` +
        `later with its venv module (Debian: apt-get install python3-venv):\n${output}`)
    }
  }
  writeFileSync(stamp, digest)
  return executable
}

// How a step failed (its exit code, the signal that stopped it, or why it could not start), or
// undefined; and its output, which says why.
function run (file, args) {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: projectRoot, timeout: 600_000, encoding: 'utf8' }, (error, stdout, stderr) => {
      const failure = error === null
        ? undefined
        : typeof error.code === 'number' ? `exit ${error.code}` : error.signal ? `stopped by ${error.signal}` : String(error.code)
      resolve({ failure, output: `${stdout}\n${stderr}` })
    })
  })
}
