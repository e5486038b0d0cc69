import { spawnSync } from 'node:child_process'
import t from 'tap'

// The benches' counts and lengths are refused, with the option's name, unless they are above 0
// (and whole where they must be): `--rounds 0` printed medians of nothing, -Infinity and NaN.
const runBench = (script: string, ...args: string[]): { status: number | null, stderr: string } => {
  const { status, stderr } = spawnSync(process.execPath, [...process.execArgv, script, ...args], { encoding: 'utf8', timeout: 60_000 })
  return { status, stderr }
}

t.test('npm run bench refuses a count that is not a whole number above 0', async (t) => {
  for (const [option, value] of [['--rounds', '0'], ['--connections', '2.5'], ['--stored', 'many'], ['--duration', 'Infinity']] as const) {
    const { status, stderr } = runBench('bench/run-benchmark.ts', `${option}=${value}`)
    t.equal(status, 2, `${option} ${value}`)
    t.match(stderr, new RegExp(`^${option} takes a (whole )?number above 0, not "${value}"`))
  }
})

t.test('npm run bench:sqlite-inserts refuses one too, before it builds a store', async (t) => {
  for (const [option, value] of [['--stored', '-1'], ['--batch', '0'], ['--inserts', 'NaN'], ['--runs', '1.5']] as const) {
    const { status, stderr } = runBench('bench/sqlite-insert-cost.ts', `${option}=${value}`)
    t.equal(status, 2, `${option} ${value}`)
    t.match(stderr, new RegExp(`^${option} takes a whole number above 0, not "${value}"`))
  }
})
