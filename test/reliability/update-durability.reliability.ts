import { type Agent, request } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { Webhook } from 'standardwebhooks'
import t, { type Test } from 'tap'
import { privatePostgres, privatePostgresSkipReason } from '../support/private-postgres.js'
import { registerWebhookEndpoint, startServer } from '../support/running-server.js'
import { readStoredPlants, type StoredPlantRow } from '../support/stored-plants.js'
import { readPostgresPlants } from '../support/test-databases.js'
import { type ReceivedWebhook, startWebhookReceiver } from '../support/webhook-receiver.js'
import { keepAliveAgent, type Plant, sendEach } from './support/plant-requests.js'
import { reliabilitySeed, seededRandom } from './support/seeded-random.js'
import { testFolder } from '../support/test-folder.js'

// A 200 from updatePlant promises what a 200 from createPlant does: the change is committed,
// survives a crash, and its plantUpdated reaches every endpoint subscribed when it committed.
// Updates under load with an endpoint subscribed, and a SIGKILL of the service at a moment the
// seed chooses; afterwards, on the same database, every acknowledged update is stored, every plant
// never sent one is stored as it was, an update left without an answer, sent again, is a 200, and
// every stored change's plantUpdated arrives (one webhook-id a plant), telling of what is stored.

const token = 'reliability-token-0123456789'
const plantCount = 2000
const concurrentClients = 32
const killAfterAcknowledged = { min: plantCount / 20, max: plantCount / 2 }
const schedule = seededRandom(reliabilitySeed + 20)
// Beyond 2^53, so an id that lost a digit on its way to or from the database shows.
const firstId = 9_007_199_254_740_993n
const plants: Plant[] = Array.from({ length: plantCount }, (_, index) => ({ id: firstId + BigInt(index), name: `Before ${index}` }))
const renamed = (index: number): string => `After ${index}`

type UpdateOutcome = 'updated' | 'refused' | 'unknown' | 'unexpected'

async function sendUpdate (agent: Agent, baseUrl: string, id: bigint, name: string): Promise<UpdateOutcome> {
  const body = JSON.stringify({ name })
  return new Promise<UpdateOutcome>((resolve) => {
    const updating = request(`${baseUrl}/plants/${id}`, {
      method: 'PUT', agent, timeout: 15_000, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    }, (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => { text += chunk })
      response.on('end', () => resolve(response.statusCode === 200 && text === body ? 'updated' : response.statusCode === 503 ? 'refused' : 'unexpected'))
      response.on('error', () => resolve('unknown'))
    })
    updating.on('timeout', () => updating.destroy(new Error('no answer')))
    updating.on('error', () => resolve('unknown'))
    updating.end(body)
  })
}

// Every plant's update, from many clients, until told to stop; what each came to, by index.
class UpdateLoad {
  readonly outcomes = new Map<number, UpdateOutcome>()
  #stopping = false
  #next = 0
  readonly #agent = keepAliveAgent(concurrentClients)
  readonly #clients: Array<Promise<void>>

  constructor (baseUrl: string) {
    this.#clients = Array.from({ length: concurrentClients }, async () => {
      while (!this.#stopping && this.#next < plants.length) {
        const index = this.#next++
        this.outcomes.set(index, 'unknown')
        this.outcomes.set(index, await sendUpdate(this.#agent, baseUrl, plants[index]!.id, renamed(index)))
      }
    })
  }

  count (outcome: UpdateOutcome): number {
    return [...this.outcomes.values()].filter((seen) => seen === outcome).length
  }

  async finished (): Promise<void> {
    this.#stopping = true
    await Promise.all(this.#clients)
    this.#agent.destroy()
  }
}

// The plantUpdated messages received, by plant id: the names they told of and their webhook-ids.
function updatesTold (received: readonly ReceivedWebhook[]): Map<string, { names: Set<string>, messageIds: Set<string> }> {
  const told = new Map<string, { names: Set<string>, messageIds: Set<string> }>()
  for (const { body, headers } of received) {
    const [, id = '', name = ''] = /"type":"plantUpdated".*"data":\{"id":(-?\d+),"name":"([^"]*)"/.exec(body) ?? []
    const entry = told.get(id) ?? { names: new Set(), messageIds: new Set() }
    entry.names.add(name)
    entry.messageIds.add(String(headers['webhook-id']))
    told.set(id, entry)
  }
  return told
}

async function updateThroughACrash (t: Test, environment: Record<string, string>, read: () => Promise<StoredPlantRow[]>): Promise<void> {
  const receiver = await startWebhookReceiver(t)
  const settings = { ...environment, API_TOKENS: token, WEBHOOK_ALLOW_LOOPBACK: 'only', WEBHOOK_RETRY_SCHEDULE: '0,0.5,0.5,0.5,0.5,0.5,0.5,0.5' }
  const server = await startServer(t, settings)
  const stored = await sendEach(server.baseUrl, token, plants, concurrentClients)
  t.ok(stored.every((answer) => 'status' in answer && answer.status === 200), `${plantCount} plants stored`)
  const registered = await registerWebhookEndpoint(server.baseUrl, token, `${receiver.url}/hook`)
  t.equal(registered.status, 201, 'the endpoint is registered once the plants are stored: it is owed their updates alone')
  const { secret } = await registered.json() as { secret: string }

  const load = new UpdateLoad(server.baseUrl)
  t.teardown(async () => load.finished())
  const killAt = schedule.integer(killAfterAcknowledged.min, killAfterAcknowledged.max)
  while (load.count('updated') < killAt && load.outcomes.size < plantCount) await sleep(2)
  server.child.kill('SIGKILL')
  await server.exited
  await load.finished()
  t.ok(load.count('unknown') > 0, `the kill left updates unanswered (${load.count('unknown')})`)
  t.equal(load.count('unexpected'), 0, 'every update was a 200 with the plant, a 503, or had no answer')

  const restarted = await startServer(t, settings)
  const names = new Map((await read()).map((row) => [row.id, row.name]))
  const indexes = plants.map((_, index) => index)
  const acknowledged = indexes.filter((index) => load.outcomes.get(index) === 'updated')
  t.same(acknowledged.filter((index) => names.get(plants[index]!.id) !== renamed(index)).slice(0, 10), [],
    `every acknowledged update is stored (${acknowledged.length} of them)`)
  const untouched = indexes.filter((index) => !load.outcomes.has(index))
  t.same(untouched.filter((index) => names.get(plants[index]!.id) !== plants[index]!.name).slice(0, 10), [],
    `every plant never sent an update is stored as it was (${untouched.length} of them)`)

  const unanswered = indexes.filter((index) => load.outcomes.get(index) === 'unknown' || load.outcomes.get(index) === 'refused')
  const agent = keepAliveAgent(8)
  const retried = await Promise.all(unanswered.map(async (index) => sendUpdate(agent, restarted.baseUrl, plants[index]!.id, renamed(index))))
  agent.destroy()
  t.ok(retried.every((outcome) => outcome === 'updated'), `each of the ${unanswered.length} unanswered or refused updates, sent again, is a 200`)

  // Every plant whose stored name changed is owed one plantUpdated; the receiver shares this
  // process, so its account is read once a second.
  const changed = new Map((await read()).filter((row) => row.name.startsWith('After')).map((row) => [row.id.toString(), row.name]))
  const deadline = Date.now() + 60_000
  while ([...changed.keys()].some((id) => !updatesTold(receiver.received).has(id)) && Date.now() < deadline) await sleep(1000)
  const told = updatesTold(receiver.received)
  const lost = [...changed.keys()].filter((id) => !told.has(id))
  t.equal(lost.length, 0, `every stored update's plantUpdated arrived (${changed.size} plants; lost: ${lost.slice(0, 5).join(', ')})`)
  const untrue = [...told.entries()].filter(([id, { names: toldNames }]) => [...toldNames].some((name) => changed.get(id) !== name))
  t.equal(untrue.length, 0, 'every plantUpdated tells of the plant as stored')
  t.equal([...told.values()].filter(({ messageIds }) => messageIds.size > 1).length, 0, 'a plant told of twice is told with one webhook-id')
  const last = receiver.received.at(-1)!
  t.doesNotThrow(() => new Webhook(secret).verify(last.body, Object.fromEntries(Object.entries(last.headers).map(([k, v]) => [k, String(v)]))),
    'a delivery verifies with standardwebhooks')
  t.comment(`${acknowledged.length} updates acknowledged, ${load.count('unknown')} unanswered, ${load.count('refused')} refused; ` +
    `${receiver.received.length} deliveries for ${told.size} plants`)
}

t.test('SQLite: acknowledged updates and their webhooks survive SIGKILL of the service under load', async (t) => {
  const databaseFile = `${testFolder(t)}/plants.db`
  await updateThroughACrash(t, { DATABASE_URL: `sqlite:${databaseFile}` }, async () => readStoredPlants(databaseFile))
})

t.test('PostgreSQL: acknowledged updates and their webhooks survive SIGKILL of the service under load', { skip: privatePostgresSkipReason }, async (t) => {
  const database = await privatePostgres(t)
  await database.start()
  await updateThroughACrash(t, { DATABASE_URL: database.url }, async () => readPostgresPlants(database.url))
})
