import { spawnSync } from 'node:child_process'
import t from 'tap'

// The benches' counts and lengths are refused, with the option's name, unless they are above 0
// (and whole where they must be): `--rounds 0` printed medians of nothing, -Infinity and NaN.
// The options not under test are small, so that a check gone missing fails in seconds rather
// than building a large store.
const smallBench = ['--rounds=1', '--duration=0.1', '--stored=1000', '--only=^bare']
const smallInsertCost = ['--stored=1000', '--inserts=30', '--batch=30', '--runs=1']
const runBench = (script: string, args: readonly string[]): { status: number | null, stderr: string } => {
  const { status, stderr } = spawnSync(process.execPath, [...process.execArgv, script, ...args], { encoding: 'utf8', timeout: 15_000 })
  return { status, stderr }
}

t.test('npm run bench refuses a count or a length that is not a number above 0', async (t) => {
  for (const [option, value] of [['--rounds', '0'], ['--connections', '2.5'], ['--stored', 'many'], ['--duration', 'Infinity']] as const) {
    const { status, stderr } = runBench('bench/run-benchmark.ts', [...smallBench, `${option}=${value}`])
    t.equal(status, 2, `${option} ${value}`)
    t.match(stderr, new RegExp(`^${option} takes a (whole )?number above 0, not "${value}"`))
  }
})

t.test('npm run bench:sqlite-inserts refuses one too, before it builds a store', async (t) => {
  for (const [option, value] of [['--stored', '-1'], ['--batch', '0'], ['--inserts', 'NaN'], ['--runs', '1.5']] as const) {
    const { status, stderr } = runBench('bench/sqlite-insert-cost.ts', [...smallInsertCost, `${option}=${value}`])
    t.equal(status, 2, `${option} ${value}`)
    t.match(stderr, new RegExp(`^${option} takes a whole number above 0, not "${value}"`))
  }
})
