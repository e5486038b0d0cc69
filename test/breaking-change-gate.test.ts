import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { parseDocument, type Document } from 'yaml'
import { type CommandResult, runCommand } from './support/run-command.js'
import { testFolder } from './support/test-folder.js'

// The breaking-change gate (`npm run check:breaking`) on edited copies of openapi.yaml, each
// compared with the committed spec of the last release. Optic takes seconds a run, so the runs
// start up front, two at a time (these machines have two cores), and each test awaits its own.

// Some fifteen Optic runs take 50–60 s on a quiet two-core machine, half the suite's 120 s per
// file; a machine twice as slow must not time the file out.
t.setTimeout(360_000)

const projectRoot = join(import.meta.dirname, '..')
const gateScript = join(projectRoot, 'scripts', 'check-breaking-changes.sh')
const releasedVersion = String(parseDocument(readFileSync(join(projectRoot, 'contract', 'released', 'openapi.yaml'), 'utf8')).getIn(['info', 'version']))
const nextMajorVersion = `${Number(releasedVersion.split('.')[0]) + 1}.0.0`
const folder = testFolder(t)

type Edit = (spec: Document) => void

let running = 0
const waiting: Array<() => void> = []
async function inTurn<T> (work: () => Promise<T>): Promise<T> {
  // eslint-disable-next-line no-unmodified-loop-condition -- the other runs change it while this one waits
  while (running >= 2) await new Promise<void>((resolve) => waiting.push(resolve))
  running++
  try {
    return await work()
  } finally {
    running--
    waiting.shift()?.()
  }
}

async function runGate (args: string[]): Promise<CommandResult> {
  return inTurn(() => runCommand('bash', [gateScript, ...args], { cwd: projectRoot, timeout: 120_000 }))
}

// openapi.yaml with the edits and info.version given, written to a file of its own.
async function specFile (name: string, edits: Edit[], version = releasedVersion): Promise<string> {
  const spec = parseDocument(readFileSync(join(projectRoot, 'openapi.yaml'), 'utf8'))
  for (const edit of edits) edit(spec)
  spec.setIn(['info', 'version'], version)
  const file = join(folder, `${name}.yaml`)
  writeFileSync(file, spec.toString())
  return file
}

async function gateEditedSpec (name: string, version: string, edits: Edit[]): Promise<CommandResult> {
  return runGate([await specFile(name, edits, version)])
}

const plant = ['components', 'schemas', 'Plant', 'properties']
const newPlantOwn = ['components', 'schemas', 'NewPlant', 'allOf', 1]

const breakingEdits: { name: string, edit: Edit, reported: RegExp }[] = [
  {
    name: 'removing a response field (Plant.tag)',
    edit: (spec) => spec.deleteIn([...plant, 'tag']),
    reported: /POST \/plants: \[prevent removing response property\] cannot remove response property 'tag'/,
  },
  {
    name: 'renaming a field (Plant.tag to label)',
    edit: (spec) => {
      spec.setIn([...plant, 'label'], spec.getIn([...plant, 'tag']))
      spec.deleteIn([...plant, 'tag'])
    },
    reported: /POST \/plants: .*cannot remove response property 'tag'/,
  },
  {
    name: 'a new required request field (NewPlant.colour)',
    edit: (spec) => {
      spec.setIn([...newPlantOwn, 'properties', 'colour'], { type: 'string' })
      spec.addIn([...newPlantOwn, 'required'], 'colour')
    },
    reported: /POST \/plants: .*cannot add a required request property 'colour'/,
  },
  {
    name: 'narrowing a type (Plant.name from string to integer)',
    edit: (spec) => spec.setIn([...plant, 'name', 'type'], 'integer'),
    reported: /POST \/plants: \[prevent request property type changes\] expected request body property 'name' not to be narrowed/,
  },
  {
    name: 'a new constraint on a request field (maxLength on Plant.name)',
    edit: (spec) => spec.setIn([...plant, 'name', 'maxLength'], 20),
    reported: /POST \/plants: request body \(application\/json\) name: maxLength 20 is new/,
  },
  {
    name: 'a narrower integer format (NewPlant.id from int64 to int32)',
    edit: (spec) => spec.setIn([...newPlantOwn, 'properties', 'id', 'format'], 'int32'),
    reported: /POST \/plants: request body \(application\/json\) id: format "int32" is new/,
  },
  {
    name: 'removing a status (409 from createPlant)',
    edit: (spec) => spec.deleteIn(['paths', '/plants', 'post', 'responses', '409']),
    reported: /POST \/plants: .*must not remove response status code 409/,
  },
  {
    name: 'removing an operation (getReadiness)',
    edit: (spec) => spec.deleteIn(['paths', '/readyz']),
    reported: /GET \/readyz: \[prevent operation removal\] cannot remove an operation/,
  },
]

const additiveEdits: Edit[] = [
  (spec) => spec.setIn([...plant, 'colour'], { description: 'The colour of its leaves.', type: 'string' }),
  (spec) => spec.setIn(['components', 'schemas', 'Plant', 'examples'], [{ name: 'Monstera', tag: 'aroid', colour: 'green' }]),
  (spec) => spec.setIn(['paths', '/plants', 'post', 'responses', '200', 'headers'], {
    'X-Plant-Created': { description: 'Whether this request stored the plant.', schema: { type: 'boolean' } },
  }),
  (spec) => spec.setIn(['paths', '/plants/{id}'], {
    get: {
      operationId: 'getPlant',
      summary: 'Read a plant',
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer', format: 'int64' } }],
      responses: { 200: { description: 'The plant.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Plant' } } } } },
    },
  }),
]

const checkedIn = runGate([])
const broken = breakingEdits.map(({ edit }, index) => gateEditedSpec(`breaking-${index}`, releasedVersion, [edit]))
// Renaming Plant.tag removes it too, so the first edit is left out of the run that makes them all.
const allBreaks = breakingEdits.slice(1)
const brokenInNextMajor = gateEditedSpec('breaking-next-major', nextMajorVersion, allBreaks.map(({ edit }) => edit))
const added = gateEditedSpec('additive', releasedVersion, additiveEdits)
const notSemantic = gateEditedSpec('not-semantic', 'v1', [])
const backwards = gateEditedSpec('backwards', '0.9.0', [])

t.test('the checked-in openapi.yaml passes against the released spec', async (t) => {
  const { code, stdout, stderr } = await checkedIn
  t.equal(code, 0, 'exits 0', { stdout, stderr })
  t.match(stdout, /^Breaking-change gate: openapi\.yaml \(.+\) against the released contract\/released\/openapi\.yaml \(/)
})

for (const [index, { name, reported }] of breakingEdits.entries()) {
  t.test(`${name} fails, saying what broke`, async (t) => {
    const { code, stdout, stderr } = await broken[index]!
    t.equal(code, 1, 'exits 1', { stdout, stderr })
    t.match(stdout, `BREAKING: ${join(folder, `breaking-${index}.yaml`)} would break clients of the released ${releasedVersion}:`)
    t.match(stdout, reported)
    t.match(stdout, `set info.version in ${join(folder, `breaking-${index}.yaml`)} to ${nextMajorVersion}.`)
  })
}

t.test(`the same breaking edits pass when info.version goes to ${nextMajorVersion}, still listed`, async (t) => {
  const { code, stdout, stderr } = await brokenInNextMajor
  t.equal(code, 0, 'exits 0', { stdout, stderr })
  t.match(stdout, `breaks clients of ${releasedVersion}, as its new major version ${nextMajorVersion} says it may:`)
  for (const { reported } of allBreaks) t.match(stdout, reported)
})

t.test('additive edits pass: an optional field, examples, an optional response header, an operation', async (t) => {
  const { code, stdout, stderr } = await added
  t.equal(code, 0, 'exits 0', { stdout, stderr })
  t.match(stdout, `No breaking change: every client of ${releasedVersion} works with`)
})

t.test('an info.version that is not MAJOR.MINOR.PATCH, or goes back a major, fails before any diff', async (t) => {
  const [semantic, back] = await Promise.all([notSemantic, backwards])
  t.equal(semantic.code, 1, 'a version that is not semantic')
  t.match(semantic.stderr, /info\.version "v1" is not MAJOR\.MINOR\.PATCH/)
  t.equal(back.code, 1, 'a version that goes back')
  t.match(back.stderr, `info.version 0.9.0 goes back from the released ${releasedVersion}`)
})

// A baseline of its own, in a folder whose accepted-changes.yaml the test writes.
function baselineAccepting (name: string, acceptedChanges: string): string {
  const baselineFolder = join(folder, name)
  mkdirSync(baselineFolder)
  const baseline = join(baselineFolder, 'openapi.yaml')
  copyFileSync(join(projectRoot, 'contract', 'released', 'openapi.yaml'), baseline)
  // The checked-in spec's own accepted changes, so that only the test's edit is in question.
  writeFileSync(join(baselineFolder, 'accepted-changes.yaml'),
    readFileSync(join(projectRoot, 'contract', 'released', 'accepted-changes.yaml'), 'utf8') + acceptedChanges)
  return baseline
}

const maxLengthChange = 'POST /plants: request body (application/json) name: maxLength 20 is new'
const maxLengthEdit: Edit = (spec) => spec.setIn([...plant, 'name', 'maxLength'], 20)

t.test('a reported change accepted beside the baseline, with why, passes and is still shown', async (t) => {
  const baseline = baselineAccepting('accepting', `- change: '${maxLengthChange}'\n  why: The service never stored longer names.\n`)
  const spec = await specFile('accepted-edit', [maxLengthEdit])
  const { code, stdout, stderr } = await runGate([spec, baseline])
  t.equal(code, 0, 'exits 0', { stdout, stderr })
  t.match(stdout, `Reported, and accepted in ${join(folder, 'accepting', 'accepted-changes.yaml')} as breaking no client of ${releasedVersion}:`)
  t.match(stdout, `  ${maxLengthChange}\n`)
  t.match(stdout, 'No breaking change')
})

t.test('an accepted change must match exactly and say why', async (t) => {
  const spec = await specFile('unaccepted-edit', [maxLengthEdit])
  const otherChange = baselineAccepting('accepting-another', "- change: 'POST /plants: request body (application/json) name: maxLength 30 is new'\n  why: Another change.\n")
  const other = await runGate([spec, otherChange])
  t.equal(other.code, 1, 'another change accepted: the edit still fails')
  t.match(other.stdout, `BREAKING: ${spec} would break clients`)
  const noReason = baselineAccepting('accepting-without-why', `- change: '${maxLengthChange}'\n`)
  const unexplained = await runGate([spec, noReason])
  t.equal(unexplained.code, 2, 'an acceptance without its reason stops the gate')
  t.match(unexplained.stderr, 'every entry needs a change and a why')
})

t.test('recording a release clears the changes accepted against the one before', async (t) => {
  const copy = t.testdir({ scripts: {}, contract: { released: {} } })
  copyFileSync(join(projectRoot, 'scripts', 'record-released-spec.sh'), join(copy, 'scripts', 'record-released-spec.sh'))
  copyFileSync(join(projectRoot, 'openapi.yaml'), join(copy, 'openapi.yaml'))
  writeFileSync(join(copy, 'contract', 'released', 'accepted-changes.yaml'), `# Why this file exists.\n- change: '${maxLengthChange}'\n  why: A reason.\n`)
  const git = async (...args: string[]): Promise<void> => {
    const { code, stderr } = await runCommand('git', ['-c', 'user.name=test', '-c', 'user.email=test@localhost', ...args], { cwd: copy, timeout: 20_000 })
    t.equal(code, 0, `git ${args[0] ?? ''}`, { stderr })
  }
  await git('init', '-q')
  await git('add', 'openapi.yaml')
  await git('commit', '-q', '-m', 'a release')
  const { code, stdout, stderr } = await runCommand('bash', [join(copy, 'scripts', 'record-released-spec.sh')], {
    cwd: copy, timeout: 20_000, env: { ...process.env, NODE_PATH: join(projectRoot, 'node_modules') },
  })
  t.equal(code, 0, 'records', { stdout, stderr })
  t.equal(readFileSync(join(copy, 'contract', 'released', 'openapi.yaml'), 'utf8'), readFileSync(join(projectRoot, 'openapi.yaml'), 'utf8'))
  t.equal(readFileSync(join(copy, 'contract', 'released', 'accepted-changes.yaml'), 'utf8'), '# Why this file exists.\n[]\n')
})
