import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import t from 'tap'
import { runCommand } from '../support/run-command.js'

// A kind of write added to PlantWrites (src/store/plant-writes.ts), its fields, results and change
// together, must be a compile error at each place that must learn it: every switch over a write's
// kind ends in unreachable(), and each map keyed by the kinds must name it. On a copy of the
// sources, one tsc run type-checks the tree as it is beside the tree with a new kind added, and
// the edited tree's errors must be exactly those places, found in the code, not listed here.

// Type-checking two copies of src/ takes a few seconds of CPU each, and a shared machine's slow phase
// may stretch it several times over.
t.setTimeout(300_000)

const projectRoot = join(import.meta.dirname, '..', '..')
const kindsFile = join('src', 'store', 'plant-writes.ts')
const kindsDeclaration = 'interface PlantWrites {\n'
const newKind = `  rename: {
    write: { readonly id: bigint, readonly name: string }
    result: 'renamed' | 'absent'
    change: 'plant-renamed'
  }
`

function copyTrees (): string {
  const folder = mkdtempSync(join(tmpdir(), 'plant-store-write-kinds-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  for (const tree of ['original', 'edited']) {
    mkdirSync(join(folder, tree))
    for (const entry of ['src', 'generated', 'package.json', 'tsconfig.json']) {
      cpSync(join(projectRoot, entry), join(folder, tree, entry), { recursive: true })
    }
  }
  // Both trees find the same packages above them. Each is checked on its own: the two declare the
  // same augmentations of Fastify's types, which differ once one tree has a kind more.
  symlinkSync(join(projectRoot, 'node_modules'), join(folder, 'node_modules'))
  for (const tree of ['original', 'edited']) {
    writeFileSync(join(folder, `tsconfig.${tree}.json`), JSON.stringify({
      extends: `./${tree}/tsconfig.json`,
      compilerOptions: { rootDir: '.' },
      include: [`${tree}/src`, `${tree}/generated`],
    }))
  }
  return folder
}

function sourcesUnder (folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts')).map((file) => join(folder, file))
}

// Where the compiler must stop a new kind, as `src/…(line`: the default of each switch over a
// write's kind, and each map keyed by the kinds whose values are written out (`in PlantWriteKind]:`).
function placesThatMustLearnAKind (tree: string): string[] {
  const places: string[] = []
  for (const file of sourcesUnder(join(tree, 'src'))) {
    const lines = readFileSync(file, 'utf8').split('\n')
    const place = (index: number): string => `${relative(tree, file)}(${index + 1}`
    lines.forEach((line, index) => {
      if (/^export const \w+: .*in PlantWriteKind\]/.test(line)) places.push(place(index))
      if (!line.includes('switch (write.kind)')) return
      const end = lines.findIndex((later, laterIndex) => laterIndex > index && later.includes('default: return unreachable(write)'))
      places.push(end === -1 ? `${relative(tree, file)}: the switch at line ${index + 1} has no unreachable() default` : place(end))
    })
  }
  return places.sort()
}

t.test('a kind added to PlantWrites is a compile error at every switch over write kinds, and nowhere else', async (t) => {
  const folder = copyTrees()
  const kinds = join(folder, 'edited', kindsFile)
  const source = readFileSync(kinds, 'utf8')
  t.ok(source.includes(kindsDeclaration), 'the kinds are declared as this test expects')
  writeFileSync(kinds, source.replace(kindsDeclaration, kindsDeclaration + newKind))

  const tsc = join(folder, 'node_modules', 'typescript', 'bin', 'tsc')
  // The two trees at once, on two cores.
  const outputs = await Promise.all(['original', 'edited'].map(async (tree) =>
    runCommand(process.execPath, [tsc, '-p', `tsconfig.${tree}.json`, '--noEmit', '--pretty', 'false'], { cwd: folder, timeout: 240_000 })))
  const errors = outputs.flatMap(({ stdout }) => stdout.split('\n')).filter((line) => /^\w+\/.+\.ts\(\d+,\d+\): error TS/.test(line))
  t.same(errors.filter((line) => line.startsWith('original/')), [], 'the tree as it is compiles clean')

  const expected = placesThatMustLearnAKind(join(folder, 'edited'))
  for (const file of [kindsFile, 'src/store/sqlite/sqlite-plant-store.ts', 'src/store/postgres/postgres-batch.ts']) {
    t.ok(expected.some((place) => place.startsWith(`${file}(`)), `${file} branches over write kinds`)
  }
  const named = errors.filter((line) => line.startsWith('edited/')).map((line) => line.slice('edited/'.length).replace(/,\d+\): .*$/, ''))
  t.same([...new Set(named)].sort(), expected, 'the compiler names each place that must learn the new kind, and no other', { compiler: errors })
})

t.test('no write\'s kind is compared outside a switch', async (t) => {
  const compared = sourcesUnder(join(projectRoot, 'src')).flatMap((file) => {
    const text = readFileSync(file, 'utf8')
    if (!text.includes('PlantWrite')) return []
    return text.split('\n').flatMap((line, index) => /\.kind\s*[!=]==/.test(line) ? [`${relative(projectRoot, file)}:${index + 1}: ${line.trim()}`] : [])
  })
  t.same(compared, [], 'an if over a kind would take a new kind for one of the old ones, silently')
})
