import { Webhook } from 'standardwebhooks'
import t, { type Test } from 'tap'
import { privatePostgres, privatePostgresSkipReason } from '../support/private-postgres.js'
import { listWebhookEndpoints, registerWebhookEndpoint, type RunningServer, startServer } from '../support/running-server.js'
import { readStoredPlants, type StoredPlantRow } from '../support/stored-plants.js'
import { readPostgresPlants } from '../support/test-databases.js'
import { startWebhookReceiver } from '../support/webhook-receiver.js'
import { CreateLoad } from './support/create-load.js'
import { PlantLedger } from './support/plant-ledger.js'
import { reliabilitySeed, seededRandom } from './support/seeded-random.js'
import { testFolder } from '../support/test-folder.js'

// The transactional outbox under real crashes: creates under load with one endpoint subscribed,
// the service killed with SIGKILL at random moments and started again, on SQLite and on
// PostgreSQL. Afterwards every acknowledged create's newPlant has reached the receiver (none
// lost), every newPlant received tells of a plant that is stored, and a plant's newPlant sent
// more than once (a crash between the receipt and its record) has one webhook-id.

const token = 'reliability-token-0123456789'
const rounds = 3
const killDelayMs = { min: 150, max: 1500 }
const schedule = seededRandom(reliabilitySeed + 10)

interface Check {
  readonly databaseUrl: string
  readonly readStoredPlants: () => Promise<StoredPlantRow[]>
}

async function crashRounds (t: Test, { databaseUrl, readStoredPlants }: Check): Promise<void> {
  const receiver = await startWebhookReceiver(t)
  const environment = {
    DATABASE_URL: databaseUrl, API_TOKENS: token, WEBHOOK_ALLOW_LOOPBACK: 'only', WEBHOOK_RETRY_SCHEDULE: '0,0.5,0.5,0.5,0.5,0.5,0.5,0.5',
  }
  let server: RunningServer = await startServer(t, environment)
  const registered = await registerWebhookEndpoint(server.baseUrl, token, `${receiver.url}/hook`)
  t.equal(registered.status, 201, 'the endpoint is registered')
  const { secret } = await registered.json() as { secret: string }
  const ledger = new PlantLedger(seededRandom(reliabilitySeed + 11))
  for (let round = 1; round <= rounds; round++) {
    const load = new CreateLoad(server.baseUrl, token, ledger, 32)
    await load.acknowledged(1)
    await new Promise((resolve) => setTimeout(resolve, schedule.integer(killDelayMs.min, killDelayMs.max)))
    load.stopSending()
    server.child.kill('SIGKILL')
    await server.exited
    await load.finished()
    t.comment(`round ${round}: ${JSON.stringify(load.counts)}; ${receiver.received.length} webhooks received so far`)
    server = await startServer(t, environment)
  }

  const acknowledged = ledger.acknowledgedPlants().map(({ id }) => id.toString())
  const idsOf = (): Map<string, Set<string>> => {
    const ids = new Map<string, Set<string>>()
    for (const { body, headers } of receiver.received) {
      const id = /"data":\{"id":(-?\d+)/.exec(body)?.[1] ?? ''
      ids.set(id, new Set([...ids.get(id) ?? [], String(headers['webhook-id'])]))
    }
    return ids
  }
  // The receiver shares this process: its account is read once a second, so that it answers.
  const deadline = Date.now() + 60_000
  for (let told = idsOf(); acknowledged.some((id) => !told.has(id)) && Date.now() < deadline; told = idsOf()) {
    await new Promise((resolve) => setTimeout(resolve, 1000))
  }
  const received = idsOf()
  const endpoints = await listWebhookEndpoints(server.baseUrl, token)
  t.comment(`the endpoint now: ${await endpoints.text()}`)
  const lost = acknowledged.filter((id) => !received.has(id))
  t.equal(lost.length, 0, `every one of the ${acknowledged.length} acknowledged creates' newPlant arrived (lost: ${lost.slice(0, 5).join(', ')})`)
  const stored = new Set((await readStoredPlants()).map(({ id }) => id.toString()))
  const untrue = [...received.keys()].filter((id) => !stored.has(id))
  t.equal(untrue.length, 0, `every newPlant received tells of a stored plant (${received.size} plants told of)`)
  const twoIds = [...received.entries()].filter(([, messageIds]) => messageIds.size > 1)
  t.equal(twoIds.length, 0, 'a plant told of twice is told with one webhook-id')
  const duplicates = receiver.received.length - received.size
  t.comment(`${receiver.received.length} deliveries for ${received.size} plants: ${duplicates} sent again after a crash`)
  const last = receiver.received.at(-1)!
  t.doesNotThrow(() => new Webhook(secret).verify(last.body, Object.fromEntries(Object.entries(last.headers).map(([k, v]) => [k, String(v)]))),
    'a delivery verifies with standardwebhooks')
}

t.test('SQLite: every acknowledged create is delivered through SIGKILLs, and nothing else is', async (t) => {
  const file = `${testFolder(t)}/plants.db`
  await crashRounds(t, { databaseUrl: `sqlite:${file}`, readStoredPlants: async () => readStoredPlants(file) })
})

t.test('PostgreSQL: every acknowledged create is delivered through SIGKILLs, and nothing else is', { skip: privatePostgresSkipReason }, async (t) => {
  const database = await privatePostgres(t)
  await database.start()
  await crashRounds(t, { databaseUrl: database.url, readStoredPlants: async () => readPostgresPlants(database.url) })
})
