import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { cpus, tmpdir } from 'node:os'
import { mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { positiveOption } from './command-line.js'
import { unwrittenMiB, writtenMiB } from './disk-state.js'
import { type BenchRequest, runLoad } from './load.js'
import { everyRun, formatTable, type Measurement, median, type ScenarioSummary } from './report.js'
import { type ServerProcess, startServerProcess } from './server-process.js'
import {
  type LargeStoreShape, lastMillionCursors, randomPlantId, storeTenMillionPlants, storeTenMillionPlantsInPostgres, tenMillionPlantId,
} from './ten-million-plants.js'
import { startScriptNodeOptions } from '../test/support/start-script.js'
import {
  awaitCatchUp, awaitQuietReceiver, awaitReceived, backlogSize, deleteEndpoint, measureDrain, measureSteadyRate, registerEndpoint, startReceiver,
  storeBacklog,
} from './webhook-scenarios.js'

// `npm run bench`: the service on SQLite and on PostgreSQL against a bare Fastify route, loaded
// in turn, round after round, from this process. Prints the medians and stops by itself.
const { values: options } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '6' },
    connections: { type: 'string', default: '32' },
    'postgres-url': { type: 'string', default: process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test' },
    'log-level': { type: 'string', default: 'info' },
    // Another Node binary for the service and the bare route alike (the load stays on this one).
    node: { type: 'string', default: process.execPath },
    // Only the scenarios whose names this regular expression matches, beside the bare route:
    // `--only "new plants" --rounds 1 --duration 60` is a memory run.
    only: { type: 'string', default: '' },
    // How many plants the large stores hold: ten million, or others for the cost of a create
    // as a store grows (`--stored 100000000 --only "random ids$"`).
    stored: { type: 'string', default: '10000000' },
    // The large stores with every leaf full, as an import sorted by id leaves them, rather than
    // as creates with random ids grow them (bench/ten-million-plants.ts).
    packed: { type: 'boolean', default: false },
  },
})
const onlyScenarios = new RegExp(options.only)
const isSelected = (name: string): boolean => onlyScenarios.test(name)
const rounds = positiveOption(options, 'rounds', true)
const durationSeconds = positiveOption(options, 'duration', false)
const connections = positiveOption(options, 'connections', true)

const serverScript = join(import.meta.dirname, '..', 'src', 'server.js')
// As `npm start` runs it (see docs/benchmark.md on memory).
const serviceNodeOptions = startScriptNodeOptions()
const bareServerScript = join(import.meta.dirname, 'bare-fastify-server.js')
const replayedIdCount = 1000
const token = randomBytes(32).toString('base64url')

// Ids above the replayed ones, never sent twice in a run.
let lastFreshId = BigInt(replayedIdCount)
const plantBody = (id: bigint): string => `{"id":${id},"name":"Fern","tag":"shade"}`
const freshBody = (): string => plantBody(++lastFreshId)
// Ids drawn at random across 2^52, as clients with random or hashed ids send them: each lands
// on another page of the table's index. A repeat is a replay (a 200 too), and rare enough
// (some 10^6 ids drawn from 4.5 × 10^15) not to matter.
const randomIdBody = (): string => plantBody(randomPlantId())
const stored = positiveOption(options, 'stored', true)
const largeStoreShape: LargeStoreShape = options.packed ? 'packed' : 'grown'
const storedLabel = `${stored % 1_000_000 === 0 ? `${stored / 1_000_000}M` : stored.toLocaleString('en-US')} stored${options.packed ? ' (packed)' : ''}`
const tenMillionScenario = `SQLite, ${storedLabel}, random ids`
// Reads on the same store: plants that exist, picked at random; the first page of the list; and
// pages from the last million ids, which a keyset page reaches as fast as the first.
const tenMillionGetScenario = `SQLite, ${storedLabel}, getPlant random ids`
const tenMillionFirstPageScenario = `SQLite, ${storedLabel}, listPlants first page`
const tenMillionLastPagesScenario = `SQLite, ${storedLabel}, listPlants last million`
const tenMillionScenarios = [tenMillionScenario, tenMillionGetScenario, tenMillionFirstPageScenario, tenMillionLastPagesScenario]
const pageSize = 100
const postgresTenMillionScenario = `PostgreSQL, ${storedLabel}, random ids`
// Creates with one webhook endpoint subscribed, and with a receiver down and a million messages
// waiting, each compared with the same creates on a store with none. The random ids' and the
// large stores' creates with an endpoint say what webhooks take from issue 26's ratios.
const withEndpoint = (scenario: string): string => `${scenario}, one webhook endpoint`
const webhookScenario = withEndpoint('SQLite, new plants')
const postgresWebhookScenario = withEndpoint('PostgreSQL, new plants')
const randomIdsWebhookScenario = withEndpoint('SQLite, random ids')
const postgresRandomIdsWebhookScenario = withEndpoint('PostgreSQL, random ids')
const tenMillionWebhookScenario = withEndpoint(tenMillionScenario)
const postgresTenMillionWebhookScenario = withEndpoint(postgresTenMillionScenario)
const webhookScenarios = [
  webhookScenario, postgresWebhookScenario, randomIdsWebhookScenario, postgresRandomIdsWebhookScenario,
  tenMillionWebhookScenario, postgresTenMillionWebhookScenario,
]
// Each ten-million-plant run of creates, and the empty store's run it is compared with.
const tenMillionComparisons: Array<[string, string]> = [
  [tenMillionScenario, 'SQLite, random ids'], [postgresTenMillionScenario, 'PostgreSQL, random ids'],
  [tenMillionWebhookScenario, randomIdsWebhookScenario], [postgresTenMillionWebhookScenario, postgresRandomIdsWebhookScenario],
]
// Both sides of those comparisons are loaded twice in each round: a first run (reported apart,
// not in the table), then the measured one, under load as a store in service is. The large
// store's first creates of a round come after minutes idle while the round loaded the others,
// and idle, its leaves leave the caches (this machine's kernel pages out file pages idle for a
// minute; PostgreSQL writes a whole leaf to its log at its first change after a checkpoint): its
// first seconds of load fetch and log them again, the store's restart after a pause rather than
// its cost per create under load, which is what issue 26 compares. The empty store is loaded the
// same way (its first run follows another run on its service, not minutes idle), so that each
// ratio's two sides have gone through the same steps.
const loadedTwiceEachRound = (name: string): boolean =>
  tenMillionComparisons.some((pair) => pair.includes(name) && pair.every(isSelected))
const backlogScenario = 'SQLite, new plants, receiver down, 1M messages waiting'
const steadyRate = 2000
// New plants from clients that pipeline: a few connections, each with this many creates in flight.
const pipelinedDepth = 16
const pipelinedScenario = `SQLite, new plants, pipelined ${pipelinedDepth} deep`
let replays = 0
const replayBody = (): string => plantBody(BigInt(1 + (replays++ % replayedIdCount)))

// One run, before it is compared with the bare route's runs of its round.
type RunMeasurement = Omit<Measurement, 'ratioToBare' | 'cpuRatioToBare'> & { readonly responses: number }

interface Scenario {
  readonly name: string
  readonly server: ServerProcess
  readonly token?: string
  readonly nextRequest: () => BenchRequest
  // Requests each connection pipelines, over as many fewer connections: the same requests in
  // flight as the other scenarios.
  readonly pipelining?: number
  // Run before and after each run, the warm-up's too (the webhooks' receiver made quiet, an
  // endpoint registered, and their catch-up).
  readonly beforeRun?: () => Promise<void>
  readonly afterRun?: (run: RunMeasurement) => Promise<void>
}

const create = (nextBody: () => string) => (): BenchRequest => ({ method: 'POST', path: '/plants', body: nextBody() })
const read = (nextPath: () => string) => (): BenchRequest => ({ method: 'GET', path: nextPath() })

// What to undo when the run ends, in reverse order, each step whatever the others did: on
// success, on failure, and on SIGINT or SIGTERM.
const cleanups: Array<() => Promise<void> | void> = []
async function cleanUp (): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup()
    } catch (error) {
      process.stderr.write(`while cleaning up: ${error instanceof Error ? error.message : String(error)}\n`)
    }
  }
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void cleanUp().finally(() => process.exit(130))
  })
}

const serverNodeVersion = execFileSync(options.node, ['--version'], { encoding: 'utf8' }).trim()

async function main (): Promise<void> {
  const workFolder = mkdtempSync(join(tmpdir(), 'plant-store-bench-'))
  cleanups.push(() => rmSync(workFolder, { recursive: true, force: true }))
  const started = (server: ServerProcess): ServerProcess => {
    cleanups.push(server.stop)
    return server
  }
  try {
    const bare = started(await startServerProcess(bareServerScript, {}, join(workFolder, 'bare.log'), [], options.node))
    const bareScenario: Scenario = { name: 'bare Fastify route', server: bare, nextRequest: create(freshBody) }
    const serviceScenarios: Scenario[] = []

    const sqlite = started(await startService(`sqlite:${join(workFolder, 'plants.db')}`, join(workFolder, 'sqlite.log')))
    serviceScenarios.push(...await backendScenarios('SQLite', sqlite))

    // One receiver for every webhook scenario, made quiet before each of their runs.
    const receiver = webhookScenarios.some(isSelected) ? started(await startReceiver(join(workFolder, 'receiver.log'))) : undefined

    // The same creates with random ids, and reads, on a store that already holds ten million
    // plants (or --stored).
    if ([...tenMillionScenarios, tenMillionWebhookScenario].some(isSelected)) {
      const largeStore = join(workFolder, 'large-store.db')
      process.stdout.write(`storing ${stored.toLocaleString('en-US')} plants in a SQLite file, ${largeStoreShape}… `)
      process.stdout.write(`done in ${(await storeTenMillionPlants(largeStore, stored, largeStoreShape)).toFixed(1)} s\n`)
      // Read only when the pages are measured: on a large store, reaching its last tenth takes a while.
      const cursors = isSelected(tenMillionLastPagesScenario) ? lastMillionCursors(largeStore, 1000, pageSize, stored) : []
      let nextCursor = 0
      const large = started(await startService(`sqlite:${largeStore}`, join(workFolder, 'sqlite-large.log')))
      serviceScenarios.push(
        { name: tenMillionScenario, server: large, token, nextRequest: create(randomIdBody) },
        { name: tenMillionGetScenario, server: large, token, nextRequest: read(() => `/plants/${tenMillionPlantId(1 + Math.floor(Math.random() * stored))}`) },
        { name: tenMillionFirstPageScenario, server: large, token, nextRequest: read(() => `/plants?limit=${pageSize}`) },
        { name: tenMillionLastPagesScenario, server: large, token, nextRequest: read(() => `/plants?limit=${pageSize}&after=${cursors[nextCursor++ % cursors.length]}`) }
      )
      if (receiver !== undefined) serviceScenarios.push(endpointDuringRuns(tenMillionWebhookScenario, large, receiver))
    }

    // Each webhook scenario on an empty store has a service and a store of its own, so that the
    // others' stay without.
    let webhookService: ServerProcess | undefined
    if (receiver !== undefined && [webhookScenario, randomIdsWebhookScenario].some(isSelected)) {
      webhookService = started(await startService(`sqlite:${join(workFolder, 'webhooks.db')}`, join(workFolder, 'sqlite-webhooks.log')))
      serviceScenarios.push(...await subscribedScenarios('SQLite', webhookService, receiver))
    }
    let backlogService: ServerProcess | undefined
    let backlogReceiverPort: number | undefined
    if (isSelected(backlogScenario)) {
      const down = await startReceiver(join(workFolder, 'receiver-down.log'))
      backlogReceiverPort = Number(new URL(down.baseUrl).port)
      await down.stop()
      const backlogStore = join(workFolder, 'backlog.db')
      process.stdout.write(`queueing ${backlogSize.toLocaleString('en-US')} messages for a receiver that is down… `)
      process.stdout.write(`done in ${(await storeBacklog(backlogStore, `${down.baseUrl}/hook`)).toFixed(1)} s\n`)
      backlogService = started(await startService(`sqlite:${backlogStore}`, join(workFolder, 'sqlite-backlog.log')))
      serviceScenarios.push({ name: backlogScenario, server: backlogService, token, nextRequest: create(freshBody) })
    }

    const postgres = await preparePostgres(options['postgres-url'])
    let checkpointPostgres: (() => Promise<void>) | undefined
    if (typeof postgres === 'string') {
      process.stdout.write(`PostgreSQL skipped: ${postgres}\n`)
    } else {
      process.stdout.write(`${postgres.description}\n`)
      cleanups.push(postgres.drop)
      checkpointPostgres = postgres.checkpoint
      const service = started(await startService(postgres.url, join(workFolder, 'postgres.log')))
      serviceScenarios.push(...await backendScenarios('PostgreSQL', service))
      if (receiver !== undefined && [postgresWebhookScenario, postgresRandomIdsWebhookScenario].some(isSelected)) {
        const webhooksUrl = new URL(postgres.url)
        webhooksUrl.searchParams.set('options', `-c search_path=${postgres.schema}_webhooks`)
        const postgresWebhooks = started(await startService(webhooksUrl.toString(), join(workFolder, 'postgres-webhooks.log')))
        serviceScenarios.push(...await subscribedScenarios('PostgreSQL', postgresWebhooks, receiver))
      }
      // The ten-million-plant store on PostgreSQL: a schema of its own, made by the service's
      // migrations, then filled.
      if ([postgresTenMillionScenario, postgresTenMillionWebhookScenario].some(isSelected)) {
        const largeUrl = new URL(postgres.url)
        largeUrl.searchParams.set('options', `-c search_path=${postgres.schema}_large`)
        const postgresLarge = started(await startService(largeUrl.toString(), join(workFolder, 'postgres-large.log')))
        process.stdout.write(`storing ${stored.toLocaleString('en-US')} plants in PostgreSQL, ${largeStoreShape}… `)
        process.stdout.write(`done in ${(await storeTenMillionPlantsInPostgres(largeUrl.toString(), stored, largeStoreShape)).toFixed(1)} s\n`)
        serviceScenarios.push({ name: postgresTenMillionScenario, server: postgresLarge, token, nextRequest: create(randomIdBody) })
        if (receiver !== undefined) serviceScenarios.push(endpointDuringRuns(postgresTenMillionWebhookScenario, postgresLarge, receiver))
      }
    }

    process.stdout.write(`${rounds} rounds of ${durationSeconds} s per scenario, ${connections} connections; warming up\n`)
    const measuredScenarios = serviceScenarios.filter(({ name }) => isSelected(name))
    const scenarios = [bareScenario, ...measuredScenarios]
    for (const scenario of scenarios) {
      await scenario.beforeRun?.()
      await scenario.afterRun?.(await measure(scenario, Math.min(3, durationSeconds)))
    }

    const runs = new Map<string, Measurement[]>(scenarios.map(({ name }) => [name, []]))
    const firstRuns = new Map<string, RunMeasurement[]>(scenarios.map(({ name }) => [name, []]))
    for (let round = 1; round <= rounds; round++) {
      // The bare route is loaded first and last in every round, and each run is compared with
      // the mean of the two: a shared machine that slows down or speeds up during a round then
      // moves both sides of the ratio alike.
      const roundRuns: Array<[Scenario, RunMeasurement]> = []
      for (const scenario of [bareScenario, ...measuredScenarios, bareScenario]) {
        if (loadedTwiceEachRound(scenario.name)) {
          firstRuns.get(scenario.name)!.push(await loadOnce(scenario, `round ${round}: ${scenario.name}, first of two runs`))
        }
        roundRuns.push([scenario, await loadOnce(scenario, `round ${round}: ${scenario.name}`)])
      }
      const bareRuns = roundRuns.filter(([scenario]) => scenario === bareScenario)
      const mean = (value: (run: RunMeasurement) => number): number =>
        bareRuns.reduce((sum, [, run]) => sum + value(run), 0) / bareRuns.length
      const bareRequestsPerSecond = mean((run) => run.requestsPerSecond)
      const bareCpuPerRequest = mean((run) => run.cpuMicrosecondsPerRequest)
      for (const [scenario, run] of roundRuns) {
        runs.get(scenario.name)!.push({
          ...run,
          ratioToBare: run.requestsPerSecond / bareRequestsPerSecond,
          cpuRatioToBare: run.cpuMicrosecondsPerRequest / bareCpuPerRequest,
        })
      }
    }

    const summaries: ScenarioSummary[] = scenarios.map(({ name }) => ({ name, runs: runs.get(name)!, unmeasuredRuns: firstRuns.get(name)! }))
    process.stdout.write(`\n${formatTable(summaries)}\n\n`)
    for (const [large, empty] of tenMillionComparisons) {
      const largeRuns = runs.get(large)
      const emptyRuns = runs.get(empty)
      if (largeRuns === undefined || emptyRuns === undefined) continue
      process.stdout.write(`${large}: ${shareOf(largeRuns, emptyRuns)} of the empty store's rate ("${empty}"); ` +
        `in the first of each round's two runs, ${shareOf(firstRuns.get(large)!, firstRuns.get(empty)!)}.\n`)
    }
    const compared: Array<[string, string]> = [
      [webhookScenario, 'SQLite, new plants'], [postgresWebhookScenario, 'PostgreSQL, new plants'], [backlogScenario, 'SQLite, new plants'],
      [randomIdsWebhookScenario, 'SQLite, random ids'], [postgresRandomIdsWebhookScenario, 'PostgreSQL, random ids'],
      [tenMillionWebhookScenario, tenMillionScenario], [postgresTenMillionWebhookScenario, postgresTenMillionScenario],
    ]
    for (const [scenario, without] of compared) {
      const scenarioRuns = runs.get(scenario)
      const withoutRuns = runs.get(without)
      if (scenarioRuns === undefined || withoutRuns === undefined) continue
      process.stdout.write(`${scenario}: ${shareOf(scenarioRuns, withoutRuns)} of the rate of "${without}".\n`)
    }
    if (receiver !== undefined && webhookService !== undefined) {
      // Twice: on the disk as the rounds left it, perhaps still writing back what the large
      // stores and PostgreSQL's rounds wrote (every commit's fsync queues behind that); then
      // once those writes are flushed, as on a disk the service does not share with them.
      const measureSteady = async (disk: string): Promise<void> => {
        const unwrittenBefore = unwrittenMiB()
        const writtenBefore = writtenMiB()
        const steady = await measureSteadyRate(webhookService, receiver, token, steadyRate, Math.max(10, durationSeconds), create(freshBody))
        process.stdout.write(`At a steady ${steadyRate} creates a second, ${disk} (${unwrittenBefore.toFixed(0)} MiB waiting to be written, ` +
          `${(writtenMiB() - writtenBefore).toFixed(0)} MiB written during the run), ${steady.received} webhooks (${steady.plants} distinct plants) arrived for ${steady.sent} creates; ` +
          `from commit to receipt: p50 ${steady.p50Ms.toFixed(1)} ms, p99 ${steady.p99Ms.toFixed(1)} ms, max ${steady.maxMs.toFixed(1)} ms; ` +
          `from the create's 200 to receipt (${steady.fromAnswer.matched} plants): p50 ${steady.fromAnswer.p50Ms.toFixed(1)} ms, p99 ${steady.fromAnswer.p99Ms.toFixed(1)} ms, max ${steady.fromAnswer.maxMs.toFixed(1)} ms; ` +
          `the creates' own p99 ${Math.round(steady.createsP99Ms)} ms; ` +
          `server CPU per create with its delivery ${steady.cpuMicrosecondsPerCreate.toFixed(0)} µs.\n`)
      }
      await measureSteady('on the disk as the rounds left it')
      const settledSeconds = await settleDisk(checkpointPostgres)
      // What the first measurement's stall left on its way is not counted in the second.
      await awaitQuietReceiver(receiver, 120)
      await measureSteady(`once the rounds' writes were flushed (${settledSeconds.toFixed(1)} s)`)
    }
    if (backlogService !== undefined && backlogReceiverPort !== undefined) {
      const back = started(await startReceiver(join(workFolder, 'receiver-back.log'), backlogReceiverPort))
      await awaitReceived(back, 1, 30)
      const drained = await measureDrain(back, Math.max(10, durationSeconds))
      process.stdout.write(`The receiver back, the backlog drained at ${Math.round(drained)} messages a second; ` +
        `the service's RSS ${backlogService.residentMemoryMiB().toFixed(0)} MiB.\n`)
    }
    const firstPageRuns = runs.get(tenMillionFirstPageScenario)
    const lastPagesRuns = runs.get(tenMillionLastPagesScenario)
    if (firstPageRuns !== undefined && lastPagesRuns !== undefined) {
      process.stdout.write(`Pages of ${pageSize} from the last million ids ran at ` +
        `${shareOf(lastPagesRuns, firstPageRuns)} of the first page's rate.\n`)
    }
    process.stdout.write(`${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${serverNodeVersion} (the servers), ${process.version} (the load); ` +
      `medians of ${rounds} rounds of ${durationSeconds} s runs (the bare route first and last in each), ` +
      `${connections} connections; the service logs at ${options['log-level']}\n`)
    const failures = summaries.flatMap(everyRun).reduce((total, run) => total + run.failures, 0)
    if (failures > 0) {
      process.stdout.write(`${failures} requests failed or were answered with a non-2xx status\n`)
      process.exitCode = 1
    }
  } finally {
    await cleanUp()
  }
}

// One run of a scenario, its line printed (any catch-up its afterRun reports follows it).
async function loadOnce (scenario: Scenario, label: string): Promise<RunMeasurement> {
  await scenario.beforeRun?.()
  const run = await measure(scenario, durationSeconds)
  process.stdout.write(`${label}: ${Math.round(run.requestsPerSecond)} req/s, p99 ${run.p99Ms} ms, ` +
    `server CPU ${run.cpuMicrosecondsPerRequest.toFixed(0)} µs/req, RSS ${run.peakResidentMiB.toFixed(0)} MiB (${signed(run.residentGrowthMiB)} MiB), failures ${run.failures}\n`)
  await scenario.afterRun?.(run)
  return run
}

// One scenario's rate as a share of another's: the ratio of their medians, then each round's
// ratio, since one round's pair spreads wider than many changes measured here.
function shareOf (runs: ReadonlyArray<{ readonly requestsPerSecond: number }>, others: ReadonlyArray<{ readonly requestsPerSecond: number }>): string {
  const rates = runs.map((run) => run.requestsPerSecond)
  const otherRates = others.map((run) => run.requestsPerSecond)
  const rounds = rates.map((rate, index) => Math.round(rate / otherRates[index]! * 100))
  return `${Math.round(median(rates) / median(otherRates) * 100)}% (round by round ${rounds.join(', ')}%)`
}

function signed (value: number): string {
  return `${value >= 0 ? '+' : ''}${value.toFixed(1)}`
}

// Flushes what the rounds left for the disk to write, PostgreSQL's dirty buffers and then the
// kernel's dirty pages; resolves with the seconds it took. A role that may not run CHECKPOINT
// (neither a superuser nor, from PostgreSQL 15, in pg_checkpoint) leaves PostgreSQL's to it.
async function settleDisk (checkpointPostgres: (() => Promise<void>) | undefined): Promise<number> {
  const started = performance.now()
  try {
    await checkpointPostgres?.()
  } catch (error) {
    process.stdout.write(`PostgreSQL's CHECKPOINT skipped: ${error instanceof Error ? error.message : String(error)}\n`)
  }
  execFileSync('sync')
  return (performance.now() - started) / 1000
}

const quiet = (receiver: ServerProcess) => async (): Promise<void> => awaitQuietReceiver(receiver, 120)

// Creates counting up and with random ids on a service with one endpoint, subscribed for good.
async function subscribedScenarios (backend: string, service: ServerProcess, receiver: ServerProcess): Promise<Scenario[]> {
  await registerEndpoint(service, token, `${receiver.baseUrl}/hook`)
  const subscribed = { server: service, token, beforeRun: quiet(receiver), afterRun: reportCatchUp(service, receiver) }
  return [
    { name: withEndpoint(`${backend}, new plants`), nextRequest: create(freshBody), ...subscribed },
    { name: withEndpoint(`${backend}, random ids`), nextRequest: create(randomIdBody), ...subscribed },
  ]
}

// Creates with random ids on a large store with one endpoint subscribed during each run only,
// and deleted once its webhooks have arrived, so that the store's other scenarios run without.
function endpointDuringRuns (name: string, service: ServerProcess, receiver: ServerProcess): Scenario {
  let endpointId: string | undefined
  const quietReceiver = quiet(receiver)
  const catchUp = reportCatchUp(service, receiver)
  return {
    name,
    server: service,
    token,
    nextRequest: create(randomIdBody),
    beforeRun: async () => {
      await quietReceiver()
      endpointId = await registerEndpoint(service, token, `${receiver.baseUrl}/hook`)
    },
    afterRun: async (run) => {
      try {
        await catchUp(run)
      } finally {
        if (endpointId !== undefined) await deleteEndpoint(service, token, endpointId)
        endpointId = undefined
      }
    },
  }
}

// Once a run with an endpoint subscribed ends, its webhooks still on their way are waited for,
// so that their delivery takes nothing from the next scenario's run, and the CPU of a create
// with its delivery is reported whole.
function reportCatchUp (service: ServerProcess, receiver: ServerProcess) {
  return async (run: RunMeasurement): Promise<void> => {
    const created = run.responses
    const catchUp = await awaitCatchUp(service, receiver, created, 120)
    const cpuPerCreate = (run.cpuMicrosecondsPerRequest * created + catchUp.cpuSeconds * 1e6) / created
    // Counted after the clock stopped, the requests then in flight were created and delivered
    // but are not among the run's responses: so a few more plants than creates, not duplicates.
    process.stdout.write(`  ${catchUp.delivered} webhooks delivered (${catchUp.plants} distinct plants) for ${created} creates answered in the run, ${catchUp.seconds.toFixed(1)} s after it; ` +
      `server CPU per create with its delivery ${cpuPerCreate.toFixed(0)} µs\n`)
  }
}

async function startService (databaseUrl: string, logFile: string): Promise<ServerProcess> {
  return startServerProcess(serverScript, {
    DATABASE_URL: databaseUrl,
    API_TOKENS: token,
    LOG_LEVEL: options['log-level'],
    // One token drives ~15,000 creates a second here, some 900,000 a minute: over the default
    // per-credential limit, and a run fails on any non-2xx. At the highest setting the limiter
    // never refuses but still counts every request, so its cost stays in what is measured.
    RATE_LIMIT_PER_CREDENTIAL: '1000000000',
    // The receivers are local; a backlog's endpoint, once rested, is probed again within a second.
    WEBHOOK_ALLOW_LOOPBACK: 'only',
    WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1,1,1,1,1,1',
  }, logFile, serviceNodeOptions, options.node)
}

// Fresh ids, and replays of plants stored beforehand (the same id and body: a 200 again).
async function backendScenarios (backend: string, server: ServerProcess): Promise<Scenario[]> {
  await storeReplayedPlants(server)
  return [
    { name: `${backend}, new plants`, server, token, nextRequest: create(freshBody) },
    { name: `${backend}, random ids`, server, token, nextRequest: create(randomIdBody) },
    { name: `${backend}, replays`, server, token, nextRequest: create(replayBody) },
    ...backend === 'SQLite' ? [{ name: pipelinedScenario, server, token, nextRequest: create(freshBody), pipelining: pipelinedDepth }] : [],
  ]
}

async function storeReplayedPlants (server: ServerProcess): Promise<void> {
  for (let first = 1; first <= replayedIdCount; first += connections) {
    const ids = Array.from({ length: Math.min(connections, replayedIdCount - first + 1) }, (_, index) => BigInt(first + index))
    await Promise.all(ids.map(async (id) => {
      const response = await fetch(`${server.baseUrl}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: plantBody(id),
      })
      if (response.status !== 200) throw new Error(`storing plant ${id} got ${response.status}: ${await response.text()}`)
    }))
  }
}

// Resident memory is sampled four times a second; its growth is the last sample's excess over
// the one a quarter into the run (start-up and warm-up allocations are behind it by then).
async function measure (scenario: Scenario, seconds: number): Promise<RunMeasurement> {
  const residentMiB: number[] = []
  // A server that died has no memory to read; the load run reports its failed requests.
  const sample = (): void => {
    try {
      residentMiB.push(scenario.server.residentMemoryMiB())
    } catch {
      clearInterval(sampler)
    }
  }
  const sampler = setInterval(sample, 250)
  const cpuSecondsNow = (): number => {
    try {
      return scenario.server.cpuSeconds()
    } catch {
      return Number.NaN
    }
  }
  const cpuSecondsBefore = cpuSecondsNow()
  try {
    const result = await runLoad({
      baseUrl: scenario.server.baseUrl,
      ...(scenario.token === undefined ? {} : { token: scenario.token }),
      connections: Math.max(1, Math.round(connections / (scenario.pipelining ?? 1))),
      pipelining: scenario.pipelining ?? 1,
      durationSeconds: seconds,
      nextRequest: scenario.nextRequest,
    })
    sample()
    const cpuMicrosecondsPerRequest = (cpuSecondsNow() - cpuSecondsBefore) * 1e6 / result.responses
    const quarterIn = residentMiB[Math.floor(residentMiB.length / 4)] ?? Number.NaN
    return {
      ...result,
      cpuMicrosecondsPerRequest,
      peakResidentMiB: Math.max(...residentMiB),
      residentGrowthMiB: (residentMiB.at(-1) ?? Number.NaN) - quarterIn,
    }
  } finally {
    clearInterval(sampler)
  }
}

interface BenchPostgres {
  // The server's version and the settings a large store's creates depend on (below).
  readonly description: string
  readonly url: string
  readonly schema: string
  readonly checkpoint: () => Promise<void>
  readonly drop: () => Promise<void>
}

// A schema of its own, dropped afterwards; or why PostgreSQL cannot be benchmarked here.
async function preparePostgres (url: string): Promise<string | BenchPostgres> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
  } catch (error) {
    return `PostgreSQL is not reachable at ${url} (${error instanceof Error ? error.message : String(error)}); set BENCH_POSTGRES_URL`
  }
  const schema = `plant_store_bench_${randomBytes(6).toString('hex')}`
  let description: string
  try {
    // What a large store's creates depend on (docs/benchmark.md): a create with a random id on
    // ten million plants reads a leaf of the id's index, from shared_buffers or from the kernel,
    // and writes the whole leaf to the log the first time it changes after a checkpoint, which the
    // log's volume (max_wal_size) brings sooner.
    const { rows } = await client.query<{ version: string, shared_buffers: string, max_wal_size: string, wal_compression: string }>(
      `SELECT current_setting('server_version') AS version, current_setting('shared_buffers') AS shared_buffers,
        current_setting('max_wal_size') AS max_wal_size, current_setting('wal_compression') AS wal_compression`)
    const settings = rows[0]!
    description = `PostgreSQL ${settings.version}, shared_buffers ${settings.shared_buffers}, ` +
      `max_wal_size ${settings.max_wal_size}, wal_compression ${settings.wal_compression}`
    await client.query(`CREATE SCHEMA ${schema}`)
    await client.query(`CREATE SCHEMA ${schema}_webhooks`)
    await client.query(`CREATE SCHEMA ${schema}_large`)
  } catch (error) {
    await client.end()
    throw error
  }
  const withSchema = new URL(url)
  withSchema.searchParams.set('options', `-c search_path=${schema}`)
  return {
    description,
    url: withSchema.toString(),
    schema,
    checkpoint: async () => {
      await client.query('CHECKPOINT')
    },
    drop: async () => {
      try {
        await client.query(`DROP SCHEMA ${schema} CASCADE`)
        await client.query(`DROP SCHEMA ${schema}_webhooks CASCADE`)
        await client.query(`DROP SCHEMA ${schema}_large CASCADE`)
      } finally {
        await client.end()
      }
    },
  }
}

await main()
