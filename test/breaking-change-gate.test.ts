import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { parseDocument, type Document } from 'yaml'
import { gateRepository } from './support/gate-repository.js'
import { literalPattern } from './support/literal-pattern.js'
import { type CommandResult, runCommand } from './support/run-command.js'
import { testFolder } from './support/test-folder.js'

// The breaking-change gate (`npm run check:breaking`) on edited copies of openapi.yaml, each
// compared with the released contract. Optic takes seconds a run, so the runs start up front, two
// at a time (these machines have two cores), and each test awaits its own.

// Some twenty Optic runs take about a minute on a quiet two-core machine; a machine twice as slow
// must not time the file out.
t.setTimeout(360_000)

const projectRoot = join(import.meta.dirname, '..')
const gateScript = join(projectRoot, 'scripts', 'check-breaking-changes.mjs')
const releasedFile = join(projectRoot, 'contract', 'released', 'openapi.yaml')
const releasedVersion = String(parseDocument(readFileSync(releasedFile, 'utf8')).getIn(['info', 'version']))
const nextMajorVersion = `${Number(releasedVersion.split('.')[0]) + 1}.0.0`
// The checked-in spec's version, which may be ahead of the release (a minor change not released yet).
const specVersion = String(parseDocument(readFileSync(join(projectRoot, 'openapi.yaml'), 'utf8')).getIn(['info', 'version']))
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
  return inTurn(() => runCommand(process.execPath, [gateScript, ...args], { cwd: projectRoot, timeout: 120_000 }))
}

// openapi.yaml (or the released contract) with the edits and info.version given, written as
// openapi.yaml in a folder of its own, so that the gate cites it as openapi.yaml:<line>.
function specFile (name: string, edits: Edit[], { version = releasedVersion, from = join(projectRoot, 'openapi.yaml') } = {}): string {
  const spec = parseDocument(readFileSync(from, 'utf8'))
  for (const edit of edits) edit(spec)
  spec.setIn(['info', 'version'], version)
  mkdirSync(join(folder, name))
  const file = join(folder, name, 'openapi.yaml')
  writeFileSync(file, spec.toString())
  return file
}

function firstLine (output: string): string {
  return output.split('\n')[0] ?? ''
}

// The line of `file` that the gate cites for `change`, or undefined when it does not report it.
function citedLine (output: string, file: string, change: string): string | undefined {
  const match = new RegExp(`^${literalPattern(file).source}:(\\d+): ${literalPattern(change).source}(?: \\(against .+ only\\))?$`, 'm').exec(output)
  if (match === null) return undefined
  return readFileSync(file, 'utf8').split('\n')[Number(match[1]) - 1]
}

const plant = ['components', 'schemas', 'Plant', 'properties']
const newPlantOwn = ['components', 'schemas', 'NewPlant', 'allOf', 1]
const tagEnum = [...plant, 'tag', 'enum']

interface BreakingEdit {
  readonly name: string
  readonly edit: Edit
  // The change the gate reports, and what the line it cites in the edited copy holds.
  readonly change: string
  readonly cited: RegExp
  // Edits of a released contract of the test's own, for a rule the real one holds nothing to try on.
  readonly released?: Edit
}

const breakingEdits: BreakingEdit[] = [
  {
    name: 'renaming a response field (Plant.tag to label)',
    edit: (spec) => {
      spec.setIn([...plant, 'label'], spec.getIn([...plant, 'tag']))
      spec.deleteIn([...plant, 'tag'])
    },
    change: "GET /plants/{id}: [prevent removing response property] cannot remove response property 'tag'",
    cited: /^ {6}properties:$/,
  },
  {
    name: 'a new required request field (NewPlant.colour)',
    edit: (spec) => {
      spec.setIn([...newPlantOwn, 'properties', 'colour'], { type: 'string' })
      spec.addIn([...newPlantOwn, 'required'], 'colour')
    },
    change: "POST /plants: [prevent changing request property to required] cannot add a required request property 'colour' to an existing operation",
    cited: /^ +colour:$/,
  },
  {
    name: 'a narrowed request enum (Plant.tag loses climber)',
    released: (spec) => spec.setIn(tagEnum, ['aroid', 'succulent', 'climber']),
    edit: (spec) => spec.setIn(tagEnum, ['aroid', 'succulent']),
    change: "PUT /plants/{id}: [request and response property enums] cannot remove enum option 'climber' from 'tag' property",
    cited: /enum:|tag:/,
  },
  {
    name: "narrowing listPlants' limit (maximum 1000 to 3)",
    edit: (spec) => spec.setIn(['paths', '/plants', 'get', 'parameters', 0, 'schema', 'maximum'], 3),
    change: 'GET /plants: query parameter limit: maximum went from 1000 to 3',
    cited: /^ +maximum: 3$/,
  },
  {
    name: 'a new constraint on a request field (maxLength on Plant.name)',
    edit: (spec) => spec.setIn([...plant, 'name', 'maxLength'], 20),
    change: 'POST /plants: request body (application/json) name: maxLength 20 is new',
    cited: /^ +maxLength: 20$/,
  },
  {
    name: 'removing deletePlant',
    edit: (spec) => spec.deleteIn(['paths', '/plants/{id}', 'delete']),
    change: 'DELETE /plants/{id}: [prevent operation removal] cannot remove an operation',
    cited: /^ {2}\/plants\/\{id\}:$/,
  },
  {
    name: 'removing a status (409 from createPlant)',
    edit: (spec) => spec.deleteIn(['paths', '/plants', 'post', 'responses', '409']),
    change: 'POST /plants: [prevent response status code removal] must not remove response status code 409',
    cited: /^ {6}responses:$/,
  },
  {
    name: "making the newPlant webhook's timestamp optional",
    edit: (spec) => spec.setIn(['components', 'schemas', 'NewPlantEvent', 'required'], ['type', 'data']),
    change: 'webhook newPlant: request body (application/json) timestamp is no longer required, and receivers read it',
    cited: /^ {8}timestamp:$/,
  },
  {
    name: 'removing a webhook field (plantDeleted loses timestamp)',
    edit: (spec) => spec.deleteIn(['components', 'schemas', 'PlantDeletedEvent', 'properties', 'timestamp']),
    change: 'webhook plantDeleted: request body (application/json) timestamp was removed, and receivers read it',
    cited: /^ {6}properties:$/,
  },
  {
    name: 'removing a webhook (plantUpdated)',
    edit: (spec) => spec.deleteIn(['webhooks', 'plantUpdated']),
    change: 'webhook plantUpdated: removed, so its receivers get it no more',
    cited: /^webhooks:$/,
  },
  {
    name: 'removing a response the service accepts from receivers (410 from newPlant)',
    edit: (spec) => spec.deleteIn(['webhooks', 'newPlant', 'post', 'responses', '410']),
    change: 'webhook newPlant: response 410 was removed, and the service accepts it no more',
    cited: /^ {6}responses:$/,
  },
]

const allowedEdits: { name: string, edits: Edit[] }[] = [
  {
    name: 'a new optional webhook field (newPlant gains source)',
    edits: [(spec) => spec.setIn(['components', 'schemas', 'NewPlantEvent', 'properties', 'source'], { type: 'string' })],
  },
  {
    name: 'a new webhook (plantWatered)',
    edits: [(spec) => spec.setIn(['webhooks', 'plantWatered'], {
      post: {
        summary: 'A plant was watered',
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/PlantUpdatedEvent' } } } },
        responses: { 200: { $ref: '#/components/responses/WebhookReceived' } },
      },
    })],
  },
  {
    name: 'a new operation, an optional response field and examples',
    edits: [
      (spec) => spec.setIn(['paths', '/plants/{id}/photos'], {
        get: {
          operationId: 'listPlantPhotos',
          summary: 'List the photos of a plant',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer', format: 'int64' } }],
          responses: { 200: { description: 'The photos.', content: { 'application/json': { schema: { type: 'array', items: { type: 'string' } } } } } },
        },
      }),
      (spec) => spec.setIn([...plant, 'colour'], { description: 'The colour of its leaves.', type: 'string' }),
      (spec) => spec.setIn(['components', 'schemas', 'Plant', 'examples'], [{ name: 'Monstera', tag: 'aroid', colour: 'green' }]),
    ],
  },
]

function releasedWith (name: string, edit: Edit): string {
  return specFile(name, [edit], { from: releasedFile })
}

const checkedIn = runGate([])
const broken = breakingEdits.map(({ edit, released }, index) => {
  const spec = specFile(`breaking-${index}`, released === undefined ? [edit] : [released, edit])
  return { spec, result: runGate(released === undefined ? [spec] : [spec, releasedWith(`released-${index}`, released)]) }
})
// The released contract's own edits left out, so that every other break is reported together.
const allBreaks = breakingEdits.filter(({ released }) => released === undefined)
const inNextMajor = runGate([specFile('breaking-next-major', allBreaks.map(({ edit }) => edit), { version: nextMajorVersion })])
const allowed = allowedEdits.map(({ edits }, index) => runGate([specFile(`allowed-${index}`, edits)]))
const notSemantic = runGate([specFile('not-semantic', [], { version: 'v1' })])
const backwards = runGate([specFile('backwards', [], { version: '0.9.0' })])

t.test('the checked-in openapi.yaml passes, saying so on its first line', async (t) => {
  const { code, stdout, stderr } = await checkedIn
  t.equal(code, 0, 'exits 0', { stdout, stderr })
  t.equal(firstLine(stdout), `No breaking change: ${specVersion} is enough`)
  t.match(stdout, /^Compared with the release .+ \(contract\/released\/openapi\.yaml\)/m)
})

for (const [index, { name, change, cited }] of breakingEdits.entries()) {
  t.test(`${name} breaks: the verdict first, the change cited at its line of the edited copy`, async (t) => {
    const { spec, result } = broken[index]!
    const { code, stdout, stderr } = await result
    t.equal(code, 1, 'exits 1', { stdout, stderr })
    t.equal(firstLine(stdout), `BREAKING: needs ${nextMajorVersion} (info.version is ${releasedVersion})`)
    const line = citedLine(stdout, spec, change)
    t.not(line, undefined, `reports ${change} at ${spec}:<line>`, { stdout })
    t.match(line, cited, 'the cited line is where the change is')
    t.match(stdout, `npm run release -- major (info.version ${nextMajorVersion})`)
  })
}

t.test(`the same breaks pass when info.version goes to ${nextMajorVersion}, still listed`, async (t) => {
  const { code, stdout, stderr } = await inNextMajor
  t.equal(code, 0, 'exits 0', { stdout, stderr })
  t.equal(firstLine(stdout), `Breaking change, allowed: ${nextMajorVersion} is a new major version (needs ${nextMajorVersion})`)
  for (const { change } of allBreaks) t.match(stdout, change)
})

for (const [index, { name }] of allowedEdits.entries()) {
  t.test(`${name} breaks nothing`, async (t) => {
    const { code, stdout, stderr } = await allowed[index]!
    t.equal(code, 0, 'exits 0', { stdout, stderr })
    t.equal(firstLine(stdout), `No breaking change: ${releasedVersion} is enough`)
  })
}

t.test('an info.version that is not MAJOR.MINOR.PATCH, or goes back, fails on the first line', async (t) => {
  const [semantic, back] = await Promise.all([notSemantic, backwards])
  t.equal(semantic.code, 1, 'a version that is not semantic')
  t.equal(firstLine(semantic.stdout), 'BREAKING: info.version "v1" is not MAJOR.MINOR.PATCH, so the gate cannot tell a breaking release')
  t.equal(back.code, 1, 'a version that goes back')
  t.equal(firstLine(back.stdout), `BREAKING: info.version 0.9.0 goes back from the released ${releasedVersion}`)
})

// A released contract of its own, in a folder whose accepted-changes.yaml the test writes.
// The changes the project accepts against its release, which every edited copy of openapi.yaml
// still makes: a test's own acceptances come after them.
const projectAcceptances = readFileSync(join(projectRoot, 'contract', 'released', 'accepted-changes.yaml'), 'utf8')
  .split('\n').filter((line) => !line.startsWith('#') && line.trim() !== '[]').join('\n').trim()
const projectAcceptanceCount = (projectAcceptances.match(/^- change: /gm) ?? []).length

function releasedAccepting (name: string, acceptedChanges: string): string {
  const releasedFolder = join(folder, name)
  mkdirSync(releasedFolder)
  const released = join(releasedFolder, 'openapi.yaml')
  copyFileSync(releasedFile, released)
  writeFileSync(join(releasedFolder, 'accepted-changes.yaml'), `${projectAcceptances === '' ? '' : `${projectAcceptances}\n`}${acceptedChanges}`)
  return released
}

// Plant is the body of both createPlant and updatePlant.
const maxLengthChanges = ['POST /plants', 'PUT /plants/{id}'].map((operation) => `${operation}: request body (application/json) name: maxLength 20 is new`)
const maxLengthEdit: Edit = (spec) => spec.setIn([...plant, 'name', 'maxLength'], 20)

t.test('a change accepted beside the released contract, with why, is set aside and counted', async (t) => {
  const released = releasedAccepting('accepting', maxLengthChanges.map((change) => `- change: '${change}'\n  why: The service never stored longer names.\n`).join(''))
  const { code, stdout, stderr } = await runGate([specFile('accepted-edit', [maxLengthEdit]), released])
  t.equal(code, 0, 'exits 0', { stdout, stderr })
  t.equal(firstLine(stdout), `No breaking change: ${releasedVersion} is enough`)
  for (const change of maxLengthChanges) t.notMatch(stdout, change, 'not among the findings')
  t.match(stdout, `Set aside ${2 + projectAcceptanceCount} reported changes accepted in ${join(folder, 'accepting', 'accepted-changes.yaml')}.`)
})

t.test('an accepted change must match exactly and say why', async (t) => {
  const spec = specFile('unaccepted-edit', [maxLengthEdit])
  const otherChange = releasedAccepting('accepting-another', "- change: 'POST /plants: request body (application/json) name: maxLength 30 is new'\n  why: Another change.\n")
  const other = await runGate([spec, otherChange])
  t.equal(other.code, 1, 'another change accepted: the edit still fails')
  t.equal(firstLine(other.stdout), `BREAKING: needs ${nextMajorVersion} (info.version is ${releasedVersion})`)
  const noReason = releasedAccepting('accepting-without-why', `- change: '${maxLengthChanges[0]}'\n`)
  const unexplained = await runGate([spec, noReason])
  t.equal(unexplained.code, 2, 'an acceptance without its reason stops the gate')
  t.match(unexplained.stderr, 'every entry needs a change and a why')
})

t.test('an operation added since the release but already on main is kept too', async (t) => {
  const repository = await gateRepository(t)
  const git = async (...args: string[]): Promise<void> => {
    const { code, stderr } = await repository.git(...args)
    t.equal(code, 0, `git ${args.join(' ')}`, { stderr })
  }
  // The release before deletePlant: on main, deletePlant is new since then.
  const released = join(repository.folder, 'contract', 'released', 'openapi.yaml')
  const withoutDeletePlant = (file: string): void => {
    const spec = parseDocument(readFileSync(file, 'utf8'))
    spec.deleteIn(['paths', '/plants/{id}', 'delete'])
    writeFileSync(file, spec.toString())
  }
  withoutDeletePlant(released)
  await git('commit', '--quiet', '--all', '--message', 'the release before deletePlant')

  const onMain = await inTurn(() => repository.script('check-breaking-changes.mjs'))
  t.equal(onMain.code, 0, 'main passes', { stdout: onMain.stdout, stderr: onMain.stderr })
  t.match(onMain.stdout, /^Compared with the release .+ only: on main itself\.$/m, 'on main, one line says only the release is compared')

  await git('switch', '--quiet', '--create', 'feature')
  withoutDeletePlant(join(repository.folder, 'openapi.yaml'))
  await git('commit', '--quiet', '--all', '--message', 'deletePlant goes')
  const { code, stdout, stderr } = await inTurn(() => repository.script('check-breaking-changes.mjs'))
  t.equal(code, 1, 'exits 1', { stdout, stderr })
  t.equal(firstLine(stdout), `BREAKING: needs ${nextMajorVersion} (info.version is ${specVersion})`)
  t.match(stdout, /^openapi\.yaml:\d+: DELETE \/plants\/\{id\}: \[prevent operation removal\] cannot remove an operation \(against main only\)$/m)
  t.match(stdout, /^Compared with the release .+ and with openapi\.yaml at the merge-base with main \(/m)
})
