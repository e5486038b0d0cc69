import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { parseDocument, type YAMLSeq } from 'yaml'
import { runCommand } from './support/run-command.js'

// A parameter openapi.yaml declares and no handler reads stops `npm run build`, naming the
// operation and the parameter (scripts/parameters-read.mjs): on a copy of the project, a `tag`
// filter added to listPlants, as a team member would add it before writing its code; and a
// header parameter added to getPlant.

// Two builds of a copy of the project: a few seconds of CPU each, longer on a slow machine.
t.setTimeout(300_000)

const projectRoot = join(import.meta.dirname, '..')

function copyOfTheProject (): string {
  const folder = mkdtempSync(join(tmpdir(), 'plant-store-parameters-read-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  // The build compiles bench/ too, which uses two of the tests' helpers.
  for (const entry of ['src', 'generated', 'bench', 'scripts', 'test/support', 'openapi.yaml', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) {
    cpSync(join(projectRoot, entry), join(folder, entry), { recursive: true })
  }
  symlinkSync(join(projectRoot, 'node_modules'), join(folder, 'node_modules'))
  return folder
}

function addParameter (folder: string, path: string, method: string, parameter: object): void {
  const spec = parseDocument(readFileSync(join(folder, 'openapi.yaml'), 'utf8'))
  const parameters = spec.getIn(['paths', path, method, 'parameters']) as YAMLSeq
  parameters.add(spec.createNode(parameter))
  writeFileSync(join(folder, 'openapi.yaml'), spec.toString())
}

async function build (folder: string): Promise<{ code: number | null, output: string }> {
  const { code, stdout, stderr } = await runCommand(process.execPath, [join(folder, 'scripts', 'build.mjs')], { cwd: folder, timeout: 240_000 })
  return { code, output: stdout + stderr }
}

t.test('the project as it is builds: every declared parameter is read', async (t) => {
  const { code, output } = await build(copyOfTheProject())
  t.equal(code, 0, output)
})

t.test('a declared parameter that no handler reads stops the build, naming it', async (t) => {
  const folder = copyOfTheProject()
  addParameter(folder, '/plants', 'get', { name: 'tag', in: 'query', required: false, schema: { type: 'string' } })
  addParameter(folder, '/plants/{id}', 'get', { name: 'X-Plant-Note', in: 'header', required: false, schema: { type: 'string' } })
  const { code, output } = await build(folder)
  t.equal(code, 1, 'the build fails')
  t.match(output, 'openapi.yaml: listPlants declares the query parameter tag, which its handler never reads')
  t.match(output, 'openapi.yaml: getPlant declares the header parameter X-Plant-Note, which its handler never reads')
  t.notMatch(output, /declares the (query|path|header) parameter (limit|after|id|If-Match)\b/, 'and no parameter that is read')
})
