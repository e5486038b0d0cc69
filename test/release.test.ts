import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { parseDocument } from 'yaml'
import { type GateRepository, gateRepository } from './support/gate-repository.js'

// `npm run release -- <major|minor|patch>` in a git repository of the test's own (the project's
// tags are never touched). Each release runs the breaking-change gate, an Optic run of seconds.
t.setTimeout(240_000)

const releasedVersion = String(parseDocument(readFileSync(join(import.meta.dirname, '..', 'contract', 'released', 'openapi.yaml'), 'utf8')).getIn(['info', 'version']))
const [major = 0, minor = 0] = releasedVersion.split('.').map(Number)
const nextMinor = `${major}.${minor + 1}.0`
const nextMajor = `${major + 1}.0.0`

function read (repository: GateRepository, path: string): string {
  return readFileSync(join(repository.folder, path), 'utf8')
}

async function output (repository: GateRepository, ...args: string[]): Promise<string> {
  const { stdout } = await repository.git(...args)
  return stdout.trim()
}

t.test(`a minor release sets info.version to ${nextMinor}, records the contract, commits and tags`, async (t) => {
  const repository = await gateRepository(t)
  const specBefore = read(repository, 'openapi.yaml')
  // The project's own acceptances stay (the spec still makes those changes), and one more.
  const accepted = read(repository, 'contract/released/accepted-changes.yaml').replace(/^\[\]\n?/m, '')
  const comment = accepted.split('\n').filter((line) => line.startsWith('#')).join('\n')
  writeFileSync(join(repository.folder, 'contract', 'released', 'accepted-changes.yaml'),
    `${accepted}- change: 'POST /plants: a change'\n  why: A reason.\n`)
  await repository.git('commit', '--quiet', '--all', '--message', 'a change accepted')

  const { code, stdout, stderr } = await repository.script('release.mjs', 'minor')
  t.equal(code, 0, 'exits 0', { stdout, stderr })
  t.match(stdout, `Released ${nextMinor}: committed `)
  const spec = read(repository, 'openapi.yaml')
  t.equal(spec, specBefore.replace(/^ {2}version: .+$/m, `  version: ${nextMinor}`), 'only info.version changed, comments and layout kept')
  t.equal(read(repository, 'contract/released/openapi.yaml'), spec, 'the released contract is the spec')
  t.equal(read(repository, 'contract/released/accepted-changes.yaml'), `${comment}\n[]\n`, 'the accepted changes are cleared, their comment kept')
  t.equal(await output(repository, 'tag', '--points-at', 'HEAD'), `v${nextMinor}`, 'the release commit is tagged')
  t.equal(await output(repository, 'status', '--porcelain'), '', 'everything is committed')
})

t.test('a release refuses, changing nothing, on an uncommitted openapi.yaml or a bad part', async (t) => {
  const repository = await gateRepository(t)
  writeFileSync(join(repository.folder, 'openapi.yaml'), read(repository, 'openapi.yaml') + '# an edit\n')
  const dirty = await repository.script('release.mjs', 'patch')
  t.equal(dirty.code, 1, 'exits 1')
  t.match(dirty.stderr, 'release: openapi.yaml or contract/released/ has uncommitted changes; commit or stash them first')
  const badPart = await repository.script('release.mjs', 'huge')
  t.equal(badPart.code, 1, 'exits 1')
  t.match(badPart.stderr, 'usage: npm run release -- <major|minor|patch>')
  t.equal(await output(repository, 'tag'), '', 'no tag')
  t.match(read(repository, 'openapi.yaml'), /# an edit\n$/, 'the edit is left as it was')
})

t.test('a breaking change refuses a minor release and takes a major one', async (t) => {
  const repository = await gateRepository(t)
  const spec = parseDocument(read(repository, 'openapi.yaml'))
  spec.deleteIn(['paths', '/plants/{id}', 'delete'])
  writeFileSync(join(repository.folder, 'openapi.yaml'), spec.toString())
  await repository.git('commit', '--quiet', '--all', '--message', 'deletePlant goes')
  const committed = read(repository, 'openapi.yaml')

  const tooSmall = await repository.script('release.mjs', 'minor')
  t.equal(tooSmall.code, 1, 'a minor release exits 1', { stdout: tooSmall.stdout })
  t.match(tooSmall.stderr, `release: a minor release (${nextMinor}) is too small for these changes: BREAKING: needs ${nextMajor} (info.version is ${nextMinor})`)
  t.match(tooSmall.stdout, 'DELETE /plants/{id}: [prevent operation removal] cannot remove an operation', 'the gate says why')
  t.equal(read(repository, 'openapi.yaml'), committed, 'openapi.yaml is put back')
  t.equal(await output(repository, 'status', '--porcelain'), '', 'nothing is left changed')
  t.equal(await output(repository, 'tag'), '', 'no tag')

  const { code, stdout, stderr } = await repository.script('release.mjs', 'major')
  t.equal(code, 0, 'a major release exits 0', { stdout, stderr })
  t.equal(await output(repository, 'tag', '--points-at', 'HEAD'), `v${nextMajor}`)
  t.equal(String(parseDocument(read(repository, 'contract/released/openapi.yaml')).getIn(['info', 'version'])), nextMajor)
})
