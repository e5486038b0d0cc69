import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { parseDocument } from 'yaml'
import { issueManagedToken } from '../src/auth/managed-token.js'
import { parseTokenCommandLine } from '../src/cli/token-command-line.js'
import { loadOpenApiDocument } from '../src/openapi/openapi-document.js'
import { roleNamesOf } from '../src/openapi/openapi-document.js'
import { buildTestApp } from './support/helper.js'
import { type TestDatabase, testOnEveryBackend } from './support/test-databases.js'
import { runCommand } from './support/run-command.js'

// The backend team's loop, as the README tells it, on a copy of the project: edit openapi.yaml,
// `npm run generate`, `npm run typecheck`; validation follows the spec with no code change, and
// the compiler points at the handler when a change needs one.

// Each edit regenerates the types and type-checks a copy of the project: in a slow phase of a
// shared two-core machine, with another test file beside it, the file ran out of the suite's 120 s
// per file during its fifth edit. A machine twice as slow must not time it out.
t.setTimeout(360_000)

const projectRoot = join(import.meta.dirname, '..')

function copyProject (t: Test): string {
  const copy = mkdtempSync(join(tmpdir(), 'plant-store-workflow-'))
  t.teardown(() => rmSync(copy, { recursive: true, force: true }))
  for (const entry of ['openapi.yaml', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'generated', 'test', 'scripts', 'bench']) {
    cpSync(join(projectRoot, entry), join(copy, entry), { recursive: true })
  }
  symlinkSync(join(projectRoot, 'node_modules'), join(copy, 'node_modules'))
  return copy
}

function editSpec (copy: string, edit: (spec: ReturnType<typeof parseDocument>) => void): void {
  const file = join(copy, 'openapi.yaml')
  const spec = parseDocument(readFileSync(file, 'utf8'))
  edit(spec)
  writeFileSync(file, spec.toString())
}

// Whether a type error of the copy is inside the named function of src/handlers/plants.ts (from
// its first line to the next function's), the file of every plant operation's handler.
function errorInHandler (copy: string, output: string, name: string): boolean {
  const lines = readFileSync(join(copy, 'src', 'handlers', 'plants.ts'), 'utf8').split('\n')
  const first = lines.findIndex((line) => line.startsWith(`export function ${name} `)) + 1
  const next = lines.findIndex((line, index) => index >= first && line.startsWith('export function '))
  const last = next === -1 ? lines.length : next
  const errors = [...output.matchAll(/src\/handlers\/plants\.ts\((\d+),\d+\): error TS/g)].map(([, line]) => Number(line))
  return first > 0 && errors.some((line) => line >= first && line <= last)
}

async function npmRun (copy: string, script: string): Promise<{ ok: boolean, output: string }> {
  const { code, stdout, stderr } = await runCommand('npm', ['run', '--silent', script], { cwd: copy, timeout: 120_000 })
  return { ok: code === 0, output: stdout + stderr }
}

t.test('an optional property, an example and a maxLength: regenerate, type-check, and the service enforces it unchanged', async (t) => {
  const copy = copyProject(t)
  editSpec(copy, (spec) => {
    spec.setIn(['components', 'schemas', 'Plant', 'properties', 'colour'], { description: 'The colour of its leaves.', type: 'string' })
    spec.setIn(['components', 'schemas', 'Plant', 'examples'], [{ name: 'Monstera', tag: 'aroid', colour: 'green' }])
    spec.setIn(['components', 'schemas', 'Plant', 'properties', 'name', 'maxLength'], 20)
  })

  t.ok((await npmRun(copy, 'generate')).ok, 'npm run generate')
  t.match(readFileSync(join(copy, 'generated', 'openapi.d.ts'), 'utf8'), /colour\?: string;/, 'the new property is in the types')
  const typecheck = await npmRun(copy, 'typecheck')
  t.ok(typecheck.ok, `npm run typecheck passes with no code change${typecheck.ok ? '' : `:\n${typecheck.output}`}`)

  // The same code, given the edited document, enforces the new constraint.
  const { createPlant } = await buildTestApp(t, {}, { openApi: loadOpenApiDocument(join(copy, 'openapi.yaml')) })
  const tooLong = await createPlant({ id: 1, name: 'x'.repeat(21) })
  t.equal(tooLong.statusCode, 400)
  t.same(tooLong.body, { error: 40003, message: 'body.name must NOT have more than 20 characters' })
  t.equal((await createPlant({ id: 1, name: 'x'.repeat(20), colour: 'green' })).statusCode, 200)

  const { createPlant: createPlantBefore } = await buildTestApp(t)
  t.equal((await createPlantBefore({ id: 1, name: 'x'.repeat(21) })).statusCode, 200, 'the checked-in spec has no such limit')
})

t.test('a change the handler must follow is a compile error that points at the handler', async (t) => {
  const copy = copyProject(t)
  editSpec(copy, (spec) => {
    spec.setIn(['components', 'schemas', 'Plant', 'properties', 'title'], spec.getIn(['components', 'schemas', 'Plant', 'properties', 'name']))
    spec.deleteIn(['components', 'schemas', 'Plant', 'properties', 'name'])
    spec.setIn(['components', 'schemas', 'Plant', 'required'], ['title'])
  })
  t.ok((await npmRun(copy, 'generate')).ok, 'npm run generate')
  const typecheck = await npmRun(copy, 'typecheck')
  t.notOk(typecheck.ok, 'npm run typecheck fails')
  t.match(typecheck.output, /src\/handlers\/plants\.ts\(\d+,\d+\): error TS/, 'at the plants\' handlers, where the stored plants\' shape is recorded')
})

t.test('a status a handler answers that its operation no longer declares is a compile error at that handler', async (t) => {
  const copy = copyProject(t)
  editSpec(copy, (spec) => {
    spec.deleteIn(['paths', '/plants/{id}', 'get', 'responses', '404'])
    spec.deleteIn(['paths', '/plants', 'post', 'responses', '409'])
  })
  t.ok((await npmRun(copy, 'generate')).ok, 'npm run generate')
  const typecheck = await npmRun(copy, 'typecheck')
  t.notOk(typecheck.ok, 'npm run typecheck fails')
  t.ok(errorInHandler(copy, typecheck.output, 'getPlantHandler'), 'at getPlant, which answers 404')
  t.ok(errorInHandler(copy, typecheck.output, 'createPlantHandler'), 'at createPlant, which answers 409')
})

t.test('a role added to an operation\'s security requirement is enforced at once, with no change under src/', async (t) => {
  const copy = copyProject(t)
  editSpec(copy, (spec) => {
    spec.setIn(['paths', '/plants/{id}', 'get', 'security'], [{ bearerAuth: ['plants:read', 'plants:audit'] }])
  })
  t.ok((await npmRun(copy, 'generate')).ok, 'npm run generate')
  const typecheck = await npmRun(copy, 'typecheck')
  t.ok(typecheck.ok, `npm run typecheck passes with no code change${typecheck.ok ? '' : `:\n${typecheck.output}`}`)
  const openApi = loadOpenApiDocument(join(copy, 'openapi.yaml'))
  t.same(roleNamesOf(openApi.document), ['plants:audit', 'plants:read', 'plants:write', 'webhooks:manage'], 'a role of the spec')
  t.match(parseTokenCommandLine(['create', '--name', 'auditor', '--roles', 'plants:read,plants:audit'], new Date(), roleNamesOf(openApi.document)),
    { kind: 'create', roles: ['plants:read', 'plants:audit'] }, 'that the token command gives')

  const { app, send, createPlant } = await buildTestApp(t, {}, { openApi })
  await createPlant({ id: 1, name: 'Fern' })
  const reader = await issueManagedToken(app.apiTokens, { name: 'reader', roles: ['plants:read'] })
  const auditor = await issueManagedToken(app.apiTokens, { name: 'auditor', roles: ['plants:read', 'plants:audit'] })
  const refused = await send({ method: 'GET', url: '/plants/1', headers: { authorization: `Bearer ${reader.token}` } })
  t.same([refused.statusCode, refused.headers['www-authenticate']],
    [403, 'Bearer realm="plant-store", error="insufficient_scope", scope="plants:read plants:audit"'], 'a token without the new role: 403')
  const allowed = await send({ method: 'GET', url: '/plants/1', headers: { authorization: `Bearer ${auditor.token}` } })
  t.same([allowed.statusCode, allowed.body], [200, { name: 'Fern' }], 'a token that holds it: let in')
  t.equal((await send({ method: 'GET', url: '/plants', headers: { authorization: `Bearer ${reader.token}` } })).statusCode, 200,
    'the other operations as they were')
})

t.test('an optional property added to Plant is validated, stored, echoed, replayed and conflicted on, across a restart, with no code change', async (t) => {
  const copy = copyProject(t)
  editSpec(copy, (spec) => {
    spec.setIn(['components', 'schemas', 'Plant', 'properties', 'color'], { description: 'The colour of its leaves.', type: 'string', maxLength: 32 })
  })
  t.ok((await npmRun(copy, 'generate')).ok, 'npm run generate')
  const typecheck = await npmRun(copy, 'typecheck')
  t.ok(typecheck.ok, `npm run typecheck passes with no code change${typecheck.ok ? '' : `:\n${typecheck.output}`}`)
  const openApi = loadOpenApiDocument(join(copy, 'openapi.yaml'))

  testOnEveryBackend(t, 'the same code, given the edited spec', async (t, database: TestDatabase) => {
    const start = async (): Promise<Awaited<ReturnType<typeof buildTestApp>>> =>
      buildTestApp(t, { DATABASE_URL: database.url }, { openApi })
    const first = await start()
    const created = await first.createPlant({ id: 1, name: 'Fern', color: 'green', size: 'undeclared' })
    t.equal(created.statusCode, 200)
    t.same(created.body, { name: 'Fern', color: 'green' }, 'the colour is echoed; the undeclared property is not')
    t.equal((await first.createPlant({ id: 1, name: 'Fern', color: 'green' })).statusCode, 200, 'the same colour is a replay')
    const tooLong = await first.createPlant({ id: 2, name: 'Fern', color: 'g'.repeat(33) })
    t.same([tooLong.statusCode, (tooLong.body as { error: number }).error], [400, 40003], 'maxLength is enforced')
    await first.app.close()

    const restarted = await start()
    const replay = await restarted.createPlant({ id: 1, name: 'Fern', color: 'green' })
    t.same([replay.statusCode, replay.body], [200, { name: 'Fern', color: 'green' }], 'after a restart, the stored colour replays')
    const conflict = await restarted.createPlant({ id: 1, name: 'Fern', color: 'red' })
    t.same([conflict.statusCode, (conflict.body as { error: number }).error], [409, 40901], 'another colour is a conflict')
    t.equal((await restarted.createPlant({ id: 1, name: 'Fern' })).statusCode, 409, 'and so is no colour')
    t.same(await database.readStoredPlants(), [{ id: 1n, name: 'Fern', tag: null, color: 'green' }], 'the colour is stored, the undeclared property is not')
  })
})
