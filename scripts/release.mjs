// `npm run release -- <major|minor|patch>`: cuts a release of the API from the committed
// openapi.yaml. It sets info.version to the last release's version bumped by that part, runs the
// breaking-change gate (a break needs major), records the spec as the released contract
// (contract/released/openapi.yaml, with accepted-changes.yaml emptied, as its entries were about
// the release before), commits those files and tags the commit v<version>. Pushing is left to you.
//
// The bump starts from the last release, not from openapi.yaml's info.version, so that a version
// the gate asked for ahead of time (2.0.0 for a break) is not bumped twice.
//
// It refuses, changing nothing, when openapi.yaml or contract/released/ has uncommitted changes,
// when the tag exists, or when the gate says the part is too small. Exit status: 0 released,
// 1 refused, 2 could not run.
import { execFile } from 'node:child_process'
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import process from 'node:process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { parseDocument } from 'yaml'
import { bumpVersion, parseVersion } from './breaking-changes/semantic-version.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const specFile = join(root, 'openapi.yaml')
const releasedFolder = join(root, 'contract', 'released')
const releasedFile = join(releasedFolder, 'openapi.yaml')
const acceptedFile = join(releasedFolder, 'accepted-changes.yaml')
const run = promisify(execFile)

class Refused extends Error {}

async function git (...args) {
  const { stdout } = await run('git', args, { cwd: root, encoding: 'utf8' })
  return stdout.trim()
}

// openapi.yaml's text with only info.version's value replaced, so that its comments and layout stay.
function withVersion (text, version) {
  const node = parseDocument(text).getIn(['info', 'version'], true)
  if (node?.range === undefined) throw new Refused('openapi.yaml has no info.version')
  const [start, end] = node.range
  const quote = /^['"]/.test(text[start]) ? text[start] : ''
  return `${text.slice(0, start)}${quote}${version}${quote}${text.slice(end)}`
}

// Its comment, which says what the file is for, stays; its entries go.
function emptiedAcceptedChanges () {
  const comment = readFileSync(acceptedFile, 'utf8').split('\n').filter((line) => line.startsWith('#'))
  return [...comment, '[]', ''].join('\n')
}

async function release (part) {
  if (!['major', 'minor', 'patch'].includes(part)) throw new Refused('usage: npm run release -- <major|minor|patch>')
  const uncommitted = await git('status', '--porcelain', '--', 'openapi.yaml', 'contract/released')
  if (uncommitted !== '') throw new Refused(`openapi.yaml or contract/released/ has uncommitted changes; commit or stash them first:\n${uncommitted}`)
  const releasedVersion = parseVersion(parseDocument(readFileSync(releasedFile, 'utf8')).getIn(['info', 'version']))
  if (releasedVersion === undefined) throw new Error(`${releasedFile}: info.version is not MAJOR.MINOR.PATCH`)
  const version = bumpVersion(releasedVersion, part)
  const tag = `v${version}`
  if (await git('tag', '--list', tag) !== '') throw new Refused(`the tag ${tag} exists already`)

  // Both were committed when it started: a refusal or a failure puts them back as they were.
  try {
    writeFileSync(specFile, withVersion(readFileSync(specFile, 'utf8'), version))
    const verdict = await run(process.execPath, [join(root, 'scripts', 'check-breaking-changes.mjs')], { cwd: root, encoding: 'utf8' })
      .then(({ stdout }) => ({ code: 0, stdout }), ({ code, stdout, stderr }) => ({ code, stdout: stdout + stderr }))
    if (verdict.code !== 0) {
      process.stdout.write(verdict.stdout)
      if (verdict.code !== 1) throw new Error('the breaking-change gate could not run')
      throw new Refused(`a ${part} release (${version}) is too small for these changes: ${verdict.stdout.split('\n')[0]}`)
    }

    copyFileSync(specFile, releasedFile)
    if (existsSync(acceptedFile)) writeFileSync(acceptedFile, emptiedAcceptedChanges())
    await git('add', '--', 'openapi.yaml', 'contract/released')
    await git('commit', '--quiet', '-m', `Release ${version}: openapi.yaml as released is the contract the breaking-change gate keeps`)
    await git('tag', '--annotate', tag, '-m', `Release ${version}`)
  } catch (error) {
    await git('checkout', 'HEAD', '--', 'openapi.yaml', 'contract/released').catch(() => {})
    throw error
  }
  const commit = await git('rev-parse', '--short', 'HEAD')
  process.stdout.write(`Released ${version}: committed ${commit} and tagged it ${tag}. Push both: git push && git push origin ${tag}\n`)
}

try {
  await release(process.argv[2])
} catch (error) {
  process.stderr.write(`release: ${error.message}\n`)
  process.exitCode = error instanceof Refused ? 1 : 2
}
