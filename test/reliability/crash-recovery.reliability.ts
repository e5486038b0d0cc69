import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { type PrivatePostgres, privatePostgres, privatePostgresSkipReason } from '../support/private-postgres.js'
import { type RunningServer, startServer } from '../support/running-server.js'
import { readStoredPlants } from '../support/stored-plants.js'
import { readPostgresPlants } from '../support/test-databases.js'
import { CreateLoad } from './support/create-load.js'
import { CrashTally, describeRound } from './support/crash-tally.js'
import { killPostgresAbruptly, postgresDataFolder } from './support/crash-postgres.js'
import { PlantLedger } from './support/plant-ledger.js'
import { waitUntilReady } from './support/readiness.js'
import { checkRecovery, type RecoveredService } from './support/recovery-checks.js'
import { reliabilitySeed, seededRandom } from './support/seeded-random.js'
import { sqliteIntegrityCheck } from './support/sqlite-integrity.js'
import { testFolder } from '../support/test-folder.js'

// Crashes under load, at random moments: the service killed with SIGKILL, or PostgreSQL itself.
// After each, on the same database: every create that was acknowledged is stored exactly,
// nothing that was never sent is stored, and every create left without an answer (or refused)
// gets 200 when sent again, never 409 or 5xx. A 200 promises a durable commit; this is where
// that promise is tested against real crashes rather than clean shutdowns.

const token = 'reliability-token-0123456789'
const concurrentClients = 48
const sqliteRounds = 5
// Each kill comes at least this long, at most that long, after the round's first acknowledgement.
const killDelayMs = { min: 150, max: 2000 }
const postgresOutageMs = { min: 300, max: 1500 }
// After PostgreSQL comes back, the service must acknowledge this many new creates.
const acknowledgedAfterRecovery = 100

// Kill times and outages draw from one stream, the plants of each backend from one of their own,
// so that a seed repeats a run's schedule whatever the timing did to the plants.
const schedule = seededRandom(reliabilitySeed)
t.comment(`seed ${reliabilitySeed}: RELIABILITY_SEED=${reliabilitySeed} repeats this run's kill times, outage and plants`)

// A moment of the load that the seed chooses: after the first acknowledgement, so that the round
// has a promise to break, and a random delay after that.
async function randomMomentOfLoad (load: CreateLoad): Promise<number> {
  await load.acknowledged(1)
  const delayMs = schedule.integer(killDelayMs.min, killDelayMs.max)
  await sleep(delayMs)
  return delayMs
}

// SIGKILL, as the OOM killer or a lost machine would end the process: no shutdown, no answer to
// the creates in flight.
async function killServiceUnderLoad (t: Test, server: RunningServer, load: CreateLoad): Promise<void> {
  const delayMs = await randomMomentOfLoad(load)
  load.stopSending()
  const inFlight = load.inFlight
  server.child.kill('SIGKILL')
  await server.exited
  await load.finished()
  t.ok(inFlight > 0, `SIGKILL ${delayMs} ms after the first acknowledgement, with ${inFlight} creates in flight`)
  t.ok(load.counts.acknowledged > 0, `creates were acknowledged before the kill (${describeRound(load.counts)})`)
}

// PostgreSQL is killed mid-load and started again after an outage; the service stays up, answers
// 503 meanwhile, and recovers by itself.
async function crashPostgresUnderLoad (t: Test, database: PrivatePostgres, server: RunningServer, load: CreateLoad): Promise<void> {
  const dataFolder = await postgresDataFolder(database.url)
  const delayMs = await randomMomentOfLoad(load)
  const inFlight = load.inFlight
  await killPostgresAbruptly(dataFolder)
  const outageMs = schedule.integer(postgresOutageMs.min, postgresOutageMs.max)
  await sleep(outageMs)
  const refusedInOutage = load.counts.refused
  await database.start()
  const readyAfterMs = await waitUntilReady(server.baseUrl)
  const acknowledgedBefore = load.counts.acknowledged
  await load.acknowledged(acknowledgedBefore + acknowledgedAfterRecovery)
  await load.finished()
  t.ok(inFlight > 0, `PostgreSQL killed ${delayMs} ms after the first acknowledgement, with ${inFlight} creates in flight`)
  t.ok(refusedInOutage > 0, `creates were refused with 503 during the ${outageMs} ms outage (${refusedInOutage})`)
  t.equal(load.counts.unknown, 0, 'the service stayed up: every create had an answer')
  t.comment(`ready again ${readyAfterMs} ms after PostgreSQL was started; ${acknowledgedAfterRecovery} creates acknowledged since`)
}

t.test('SQLite: acknowledged creates survive SIGKILL of the service under load', async (t) => {
  const databaseFile = `${testFolder(t)}/plants.db`
  const environment = { DATABASE_URL: `sqlite:${databaseFile}`, API_TOKENS: token }
  const ledger = new PlantLedger(seededRandom(reliabilitySeed + 1))
  const tally = new CrashTally()
  const integrityResults = new Set<string>()
  // Each service lives on past the round that started it, so it belongs to the backend's test.
  const startService = async (): Promise<RunningServer> => startServer(t, environment)
  let server = await startService()

  for (let round = 1; round <= sqliteRounds; round++) {
    const results = await t.test(`round ${round} of ${sqliteRounds}`, async (t) => {
      const load = new CreateLoad(server.baseUrl, token, ledger, concurrentClients)
      // A round that fails half-way must not leave its clients sending for ever.
      t.teardown(async () => load.finished())
      await killServiceUnderLoad(t, server, load)
      server = await startService()
      const integrity = sqliteIntegrityCheck(databaseFile)
      t.same(integrity, ['ok'], 'PRAGMA integrity_check says ok')
      integrityResults.add(integrity.join('; '))
      const findings = await checkRecovery(t, ledger, sqliteService(server, databaseFile))
      tally.add(load.counts, { ...findings, recovered: findings.recovered && integrity.join() === 'ok' })
      t.comment(`round ${round}: ${describeRound(load.counts, findings)}`)
    })
    // The rounds after a failed one would only repeat its failure, or hide it.
    if (results?.ok !== true) break
  }
  assertKillsCutCreatesShort(t, tally)
  tally.report(t, 'SQLite', `; integrity_check: ${[...integrityResults].join(', ')}`)
})

t.test('PostgreSQL: acknowledged creates survive SIGKILL of the service, and of PostgreSQL, under load', {
  skip: privatePostgresSkipReason,
}, async (t) => {
  const database = await privatePostgres(t)
  await database.start()
  const environment = { DATABASE_URL: database.url, API_TOKENS: token }
  const service = (server: RunningServer): RecoveredService =>
    ({ baseUrl: server.baseUrl, token, readStoredPlants: async () => readPostgresPlants(database.url) })
  const ledger = new PlantLedger(seededRandom(reliabilitySeed + 2))
  const tally = new CrashTally()
  const startService = async (): Promise<RunningServer> => startServer(t, environment)
  let server = await startService()

  const rounds = ['the service', 'PostgreSQL', 'the service'] as const
  for (const [index, killed] of rounds.entries()) {
    const results = await t.test(`round ${index + 1}: ${killed} killed`, async (t) => {
      const load = new CreateLoad(server.baseUrl, token, ledger, concurrentClients)
      // A round that fails half-way must not leave its clients sending for ever.
      t.teardown(async () => load.finished())
      if (killed === 'PostgreSQL') {
        await crashPostgresUnderLoad(t, database, server, load)
      } else {
        await killServiceUnderLoad(t, server, load)
        server = await startService()
      }
      const findings = await checkRecovery(t, ledger, service(server))
      tally.add(load.counts, findings)
      t.comment(`round ${index + 1} (${killed} killed): ${describeRound(load.counts, findings)}`)
    })
    // The rounds after a failed one would only repeat its failure, or hide it.
    if (results?.ok !== true) break
  }
  assertKillsCutCreatesShort(t, tally)
  tally.report(t, 'PostgreSQL')
})

// A round's creates in flight are the clients' view: a kill can come when the service has
// answered every create it received and the answers wait, unread, on the clients' side. Over
// all the rounds, though, kills must have cut creates short, or none hit a working service.
function assertKillsCutCreatesShort (t: Test, tally: CrashTally): void {
  t.ok(tally.totals.unknown > 0, `the kills left creates unanswered (${tally.totals.unknown})`)
}

function sqliteService (server: RunningServer, databaseFile: string): RecoveredService {
  return { baseUrl: server.baseUrl, token, readStoredPlants: async () => readStoredPlants(databaseFile) }
}
