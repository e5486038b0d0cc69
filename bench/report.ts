export interface Measurement {
  readonly requestsPerSecond: number
  readonly ratioToBare: number
  readonly p50Ms: number
  readonly p99Ms: number
  // The server process's CPU time per response: what the throughput would follow on a machine
  // where the server, not the load generator, is the bottleneck.
  readonly cpuMicrosecondsPerRequest: number
  // That CPU time over the bare route's in the same round: the work a request adds to the least
  // an HTTP request costs, whatever the machine's speed.
  readonly cpuRatioToBare: number
  readonly peakResidentMiB: number
  readonly residentGrowthMiB: number
  readonly failures: number
}

// What every run tells, measured or not: the service's memory and the requests that failed.
type RunCosts = Pick<Measurement, 'peakResidentMiB' | 'residentGrowthMiB' | 'failures'>

export interface ScenarioSummary {
  readonly name: string
  readonly runs: readonly Measurement[]
  // Runs loaded before the measured ones in a round (the first of two), left out of the medians;
  // the memory they took and the requests they failed are the service's all the same.
  readonly unmeasuredRuns: readonly RunCosts[]
}

// Every run of a scenario, measured or not: what its memory and its failures are read from.
export function everyRun ({ runs, unmeasuredRuns }: ScenarioSummary): readonly RunCosts[] {
  return [...runs, ...unmeasuredRuns]
}

export function median (values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  if (sorted.length === 0) return Number.NaN
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

// The load generator measures whole milliseconds.
function milliseconds (value: number): string {
  return value < 1 ? '<1' : value.toFixed(0)
}

// Medians over the measured runs for speed and latency (the machine is shared and noisy); the
// highest resident memory, and the largest growth of it, seen in any run, unmeasured ones too;
// every failed request counted.
export function formatTable (scenarios: readonly ScenarioSummary[]): string {
  const header = ['scenario', 'req/s', 'ratio to bare', 'p50 ms', 'p99 ms', 'server CPU µs/req', 'CPU to bare', 'peak RSS MiB', 'RSS growth MiB', 'non-2xx or errors']
  const rows = scenarios.map((summary) => {
    const { name, runs } = summary
    const allRuns = everyRun(summary)
    return [
      name,
      Math.round(median(runs.map((run) => run.requestsPerSecond))).toLocaleString('en-US'),
      `${Math.round(median(runs.map((run) => run.ratioToBare)) * 100)}%`,
      milliseconds(median(runs.map((run) => run.p50Ms))),
      milliseconds(median(runs.map((run) => run.p99Ms))),
      median(runs.map((run) => run.cpuMicrosecondsPerRequest)).toFixed(0),
      `${median(runs.map((run) => run.cpuRatioToBare)).toFixed(2)}×`,
      Math.max(...allRuns.map((run) => run.peakResidentMiB)).toFixed(0),
      Math.max(...allRuns.map((run) => run.residentGrowthMiB)).toFixed(1),
      String(allRuns.reduce((sum, run) => sum + run.failures, 0)),
    ]
  })
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)))
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((cell, column) => column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)).join(' | ')} |`
  const rule = `|${widths.map((width, column) => column === 0 ? `-${'-'.repeat(width)}-` : `-${'-'.repeat(width)}:`).join('|')}|`
  return [line(header), rule, ...rows.map(line)].join('\n')
}
