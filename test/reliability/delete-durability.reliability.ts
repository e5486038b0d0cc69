import { type Agent, request } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { privatePostgres, privatePostgresSkipReason } from '../support/private-postgres.js'
import { type RunningServer, startServer } from '../support/running-server.js'
import { readStoredPlants, type StoredPlantRow } from '../support/stored-plants.js'
import { readPostgresPlants } from '../support/test-databases.js'
import { killPostgresAbruptly, postgresDataFolder } from './support/crash-postgres.js'
import { keepAliveAgent, type Plant, sendEach } from './support/plant-requests.js'
import { waitUntilReady } from './support/readiness.js'
import { reliabilitySeed, seededRandom } from './support/seeded-random.js'
import { testFolder } from '../support/test-folder.js'

// A 204 from deletePlant promises what a 200 from createPlant does: the deletion is committed and
// survives a crash. Deletes under load, and a SIGKILL of the service (or of PostgreSQL) at a
// moment the seed chooses; afterwards, on the same database, no plant whose delete was
// acknowledged is stored, every plant never sent a delete is stored as it was, and a delete left
// without an answer, sent again, is a 204 or a 404 (it took effect, or not yet), never a 5xx.

const token = 'reliability-token-0123456789'
const plantCount = 4000
const concurrentClients = 32
// The kill comes once as many deletes as the seed chooses have been acknowledged: a moment in
// the middle of the load on a machine of any speed. (A delay after the first acknowledgement
// outlasted all 4,000 deletes on a fast machine, and the kill found nothing in flight.)
const killAfterAcknowledged = { min: plantCount / 20, max: plantCount / 2 }
const schedule = seededRandom(reliabilitySeed + 10)
// Beyond 2^53, so an id that lost a digit on its way to or from the database shows.
const firstId = 9_007_199_254_740_993n
const plants: Plant[] = Array.from({ length: plantCount }, (_, index) => ({ id: firstId + BigInt(index), name: `Doomed ${index}` }))

type DeleteOutcome = 'deleted' | 'absent' | 'refused' | 'unknown' | 'unexpected'

async function sendDelete (agent: Agent, baseUrl: string, id: bigint): Promise<DeleteOutcome> {
  return new Promise<DeleteOutcome>((resolve) => {
    const deleting = request(`${baseUrl}/plants/${id}`, { method: 'DELETE', agent, timeout: 15_000, headers: { authorization: `Bearer ${token}` } }, (response) => {
      response.resume()
      response.on('end', () => resolve(({ 204: 'deleted', 404: 'absent', 503: 'refused' } as const)[response.statusCode as 204 | 404 | 503] ?? 'unexpected'))
      response.on('error', () => resolve('unknown'))
    })
    deleting.on('timeout', () => deleting.destroy(new Error('no answer')))
    deleting.on('error', () => resolve('unknown'))
    deleting.end()
  })
}

// Every plant's delete, from many clients, until told to stop; what each came to, by id.
class DeleteLoad {
  readonly outcomes = new Map<bigint, DeleteOutcome>()
  #ended = false
  private stopping = false
  private next = 0
  private readonly agent = keepAliveAgent(concurrentClients)
  private readonly clients: Array<Promise<void>>

  constructor (baseUrl: string) {
    this.clients = Array.from({ length: concurrentClients }, async () => {
      while (!this.stopping && this.next < plants.length) {
        const { id } = plants[this.next++]!
        this.outcomes.set(id, 'unknown')
        this.outcomes.set(id, await sendDelete(this.agent, baseUrl, id))
      }
    })
    void Promise.all(this.clients).then(() => { this.#ended = true })
  }

  // Every delete has been sent and answered (or lost).
  get ended (): boolean { return this.#ended }

  count (outcome: DeleteOutcome): number {
    return [...this.outcomes.values()].filter((seen) => seen === outcome).length
  }

  async finished (): Promise<void> {
    this.stopping = true
    await Promise.all(this.clients)
    this.agent.destroy()
  }
}

async function storeEveryPlant (t: Test, baseUrl: string): Promise<void> {
  const answers = await sendEach(baseUrl, token, plants, concurrentClients)
  t.ok(answers.every((answer) => 'status' in answer && answer.status === 200), `${plantCount} plants stored`)
}

async function randomMomentOfLoad (load: DeleteLoad): Promise<void> {
  const acknowledged = schedule.integer(killAfterAcknowledged.min, killAfterAcknowledged.max)
  while (load.count('deleted') < acknowledged && !load.ended) await sleep(2)
}

async function checkDeletes (t: Test, load: DeleteLoad, baseUrl: string, read: () => Promise<StoredPlantRow[]>): Promise<void> {
  const stored = new Map((await read()).map((row) => [row.id, row]))
  const acknowledged = plants.filter(({ id }) => load.outcomes.get(id) === 'deleted')
  t.same(acknowledged.filter(({ id }) => stored.has(id)).map(({ id }) => String(id)).slice(0, 10), [],
    `no plant whose delete was acknowledged is stored (${acknowledged.length} of them)`)
  const untouched = plants.filter(({ id }) => !load.outcomes.has(id))
  t.same(untouched.filter(({ id, name }) => stored.get(id)?.name !== name).map(({ id }) => String(id)).slice(0, 10), [],
    `every plant never sent a delete is stored as it was (${untouched.length} of them)`)
  t.equal(load.count('unexpected') + load.count('absent'), 0, 'every delete was a 204, a 503, or had no answer')

  const unanswered = plants.filter(({ id }) => load.outcomes.get(id) === 'unknown' || load.outcomes.get(id) === 'refused')
  const agent = keepAliveAgent(8)
  const retried = await Promise.all(unanswered.map(async ({ id }) => sendDelete(agent, baseUrl, id)))
  agent.destroy()
  t.ok(retried.every((outcome) => outcome === 'deleted' || outcome === 'absent'),
    `each of the ${unanswered.length} unanswered or refused deletes, sent again, is a 204 or a 404`)
  const after = new Set((await read()).map((row) => row.id))
  t.equal(unanswered.filter(({ id }) => after.has(id)).length, 0, 'and those plants are gone')
  t.comment(`${acknowledged.length} deletes acknowledged, ${load.count('unknown')} unanswered, ${load.count('refused')} refused; ` +
    `${unanswered.filter(({ id }) => !stored.has(id)).length} of the unanswered had taken effect`)
}

t.test('SQLite: acknowledged deletes survive SIGKILL of the service under load', async (t) => {
  const databaseFile = `${testFolder(t)}/plants.db`
  const environment = { DATABASE_URL: `sqlite:${databaseFile}`, API_TOKENS: token }
  const server: RunningServer = await startServer(t, environment)
  await storeEveryPlant(t, server.baseUrl)
  const load = new DeleteLoad(server.baseUrl)
  t.teardown(async () => load.finished())
  await randomMomentOfLoad(load)
  server.child.kill('SIGKILL')
  await server.exited
  await load.finished()
  t.ok(load.count('unknown') > 0, `the kill left deletes unanswered (${load.count('unknown')})`)
  const restarted = await startServer(t, environment)
  await checkDeletes(t, load, restarted.baseUrl, async () => readStoredPlants(databaseFile))
})

t.test('PostgreSQL: acknowledged deletes survive SIGKILL of the service, and of PostgreSQL', { skip: privatePostgresSkipReason }, async (t) => {
  const database = await privatePostgres(t)
  await database.start()
  const environment = { DATABASE_URL: database.url, API_TOKENS: token }
  const read = async (): Promise<StoredPlantRow[]> => readPostgresPlants(database.url)

  await t.test('the service killed', async (t) => {
    const server = await startServer(t, environment)
    await storeEveryPlant(t, server.baseUrl)
    const load = new DeleteLoad(server.baseUrl)
    t.teardown(async () => load.finished())
    await randomMomentOfLoad(load)
    server.child.kill('SIGKILL')
    await server.exited
    await load.finished()
    const restarted = await startServer(t, environment)
    await checkDeletes(t, load, restarted.baseUrl, read)
  })

  await t.test('PostgreSQL killed', async (t) => {
    const server = await startServer(t, environment)
    await storeEveryPlant(t, server.baseUrl)
    const dataFolder = await postgresDataFolder(database.url)
    const load = new DeleteLoad(server.baseUrl)
    t.teardown(async () => load.finished())
    await randomMomentOfLoad(load)
    await killPostgresAbruptly(dataFolder)
    await sleep(300)
    await load.finished()
    t.ok(load.count('refused') + load.count('unknown') > 0, 'deletes were refused or left unanswered while PostgreSQL was down')
    await database.start()
    await waitUntilReady(server.baseUrl)
    await checkDeletes(t, load, server.baseUrl, read)
  })
})
