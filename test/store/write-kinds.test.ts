import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import t from 'tap'
import { runCommand } from '../support/run-command.js'

// A kind of write added to PlantWrite (src/store/batched-writes.ts) must be a compile error at
// each place that must learn it: every switch over a write's kind ends in unreachable(), and
// the results of each kind are a map keyed by the kinds. On a copy of the sources, one tsc run
// type-checks the tree as it is beside the tree with an update added, and the edited tree's
// errors must be exactly those places, found in the code, not listed here.

// Type-checking two copies of src/ takes a few seconds of CPU, and a shared machine's slow phase
// may stretch it several times over.
t.setTimeout(300_000)

const projectRoot = join(import.meta.dirname, '..', '..')
const deleteKind = "  | { readonly kind: 'delete', readonly id: bigint, readonly context?: WriteContext | undefined }\n"
const updateKind = "  | { readonly kind: 'update', readonly plant: PlantRow, readonly context?: WriteContext | undefined }\n"

function copyTrees (): string {
  const folder = mkdtempSync(join(tmpdir(), 'plant-store-write-kinds-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  for (const tree of ['original', 'edited']) {
    mkdirSync(join(folder, tree))
    for (const entry of ['src', 'generated', 'package.json', 'tsconfig.json']) {
      cpSync(join(projectRoot, entry), join(folder, tree, entry), { recursive: true })
    }
  }
  // Both trees find the same packages, and tsc the same types, above them.
  symlinkSync(join(projectRoot, 'node_modules'), join(folder, 'node_modules'))
  writeFileSync(join(folder, 'tsconfig.json'), JSON.stringify({
    extends: './original/tsconfig.json',
    compilerOptions: { rootDir: '.' },
    include: ['original/src', 'original/generated', 'edited/src', 'edited/generated'],
  }))
  return folder
}

function sourcesUnder (folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts')).map((file) => join(folder, file))
}

// Where the compiler must stop a new kind, as `src/…(line`: the default of each switch over a
// write's kind, and each map keyed by the kinds of PlantWrite.
function placesThatMustLearnAKind (tree: string): string[] {
  const places: string[] = []
  for (const file of sourcesUnder(join(tree, 'src'))) {
    const lines = readFileSync(file, 'utf8').split('\n')
    const place = (index: number): string => `${relative(tree, file)}(${index + 1}`
    lines.forEach((line, index) => {
      if (line.includes("[PlantWrite['kind']]")) places.push(place(index))
      if (!line.includes('switch (write.kind)')) return
      const end = lines.findIndex((later, laterIndex) => laterIndex > index && later.includes('default: return unreachable(write)'))
      places.push(end === -1 ? `${relative(tree, file)}: the switch at line ${index + 1} has no unreachable() default` : place(end))
    })
  }
  return places.sort()
}

t.test('a kind added to PlantWrite is a compile error at every switch over write kinds, and nowhere else', async (t) => {
  const folder = copyTrees()
  const kinds = join(folder, 'edited', 'src', 'store', 'batched-writes.ts')
  const source = readFileSync(kinds, 'utf8')
  t.ok(source.includes(deleteKind), 'PlantWrite declares its delete as this test expects')
  writeFileSync(kinds, source.replace(deleteKind, deleteKind + updateKind))

  const tsc = join(folder, 'node_modules', 'typescript', 'bin', 'tsc')
  const { stdout } = await runCommand(process.execPath, [tsc, '-p', 'tsconfig.json', '--noEmit', '--pretty', 'false'], { cwd: folder, timeout: 240_000 })
  const errors = stdout.split('\n').filter((line) => /^\w+\/.+\.ts\(\d+,\d+\): error TS/.test(line))
  t.same(errors.filter((line) => line.startsWith('original/')), [], 'the tree as it is compiles clean')

  const expected = placesThatMustLearnAKind(join(folder, 'edited'))
  for (const file of ['src/store/batched-writes.ts', 'src/store/sqlite/sqlite-plant-store.ts', 'src/store/postgres/postgres-batch.ts']) {
    t.ok(expected.some((place) => place.startsWith(`${file}(`)), `${file} branches over write kinds`)
  }
  const named = errors.filter((line) => line.startsWith('edited/')).map((line) => line.slice('edited/'.length).replace(/,\d+\): .*$/, ''))
  t.same([...new Set(named)].sort(), expected, 'the compiler names each place that must learn the update, and no other', { compiler: errors })
})

t.test('no write\'s kind is compared outside a switch', async (t) => {
  const compared = sourcesUnder(join(projectRoot, 'src')).flatMap((file) => {
    const text = readFileSync(file, 'utf8')
    if (!text.includes('PlantWrite')) return []
    return text.split('\n').flatMap((line, index) => /\.kind\s*[!=]==/.test(line) ? [`${relative(projectRoot, file)}:${index + 1}: ${line.trim()}`] : [])
  })
  t.same(compared, [], 'an if over a kind would take a new kind for one of the old ones, silently')
})
