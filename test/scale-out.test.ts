import t, { type Test } from 'tap'
import { assertExchangeMatchesSpec } from './support/contract.js'
import { createPlant, type RunningServer, startServer } from './support/running-server.js'
import { postgresSkipReason, postgresTestDatabase, runAsAdmin } from './support/test-databases.js'
import { migrations } from '../src/store/migrations.js'

// Instances of the service scale out over one PostgreSQL database: whichever instance a request
// reaches, a create is atomic across all of them, a replay is a 200, a conflict is a 409, and
// every acknowledged plant is stored.

const token = 'scale-out-test-token-0123456789'

interface Plant { readonly id: number, readonly name: string, readonly tag?: string }

// Sends a create to one instance and checks the answer against openapi.yaml.
async function send (t: Test, server: RunningServer, plant: Plant): Promise<{ statusCode: number, body: unknown }> {
  const response = await createPlant(server.baseUrl, token, plant)
  const body = assertExchangeMatchesSpec(t, {
    method: 'POST',
    url: '/plants',
    statusCode: response.status,
    contentType: response.headers.get('content-type') ?? undefined,
    bodyText: await response.text(),
  })
  return { statusCode: response.status, body }
}

// Runs `task` for every item, at most `concurrency` at a time: enough to race, not so many
// sockets that the test measures the machine rather than the service.
async function forEachConcurrently<T> (items: readonly T[], concurrency: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) await task(items[next++] as T)
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
}

t.test('two instances on one PostgreSQL database lose nothing and agree on every id', { skip: postgresSkipReason }, async (t) => {
  const database = await postgresTestDatabase(t)
  const environment = { DATABASE_URL: database.url, API_TOKENS: token, DATABASE_POOL_SIZE: '5' }
  // Started together, so both run their migrations at once and must queue on the advisory lock.
  const servers = await Promise.all([startServer(t, environment), startServer(t, environment)])
  const [first, second] = servers
  t.not(first.port, second.port)
  // Request n of an id goes to the first instance when n is even, to the second when it is odd.
  const instance = (n: number): RunningServer => (n % 2 === 0 ? first : second)

  // Ids 1-60: the same body, twice through each instance. Ids 61-120: four different names,
  // two through each instance. Ids 121-200: one create each, alternating instances. Every
  // other id carries a tag, so a stored null tag and a stored text tag are both compared.
  const tagFor = (id: number): { tag?: string } => (id % 2 === 0 ? { tag: `tag ${id}` } : {})
  const ids = Array.from({ length: 200 }, (_, index) => index + 1)
  const expected = new Map<number, Plant>()

  await forEachConcurrently(ids, 8, async (id) => {
    if (id <= 60) {
      const plant = { id, name: `Replayed ${id}`, ...tagFor(id) }
      const responses = await Promise.all([0, 1, 2, 3].map((n) => send(t, instance(n), plant)))
      t.same(responses.map((response) => response.statusCode), [200, 200, 200, 200], `id ${id}: every replay is a 200`)
      for (const response of responses) t.same(response.body, { name: plant.name, ...tagFor(id) })
      expected.set(id, plant)
    } else if (id <= 120) {
      const racers = [0, 1, 2, 3].map((racer) => ({ id, name: `Racer ${racer} for ${id}`, ...tagFor(id) }))
      const responses = await Promise.all(racers.map((racer, index) => send(t, instance(index), racer)))
      const winners = racers.filter((_, index) => responses[index]?.statusCode === 200)
      t.equal(winners.length, 1, `id ${id}: one racer wins`)
      for (const [index, response] of responses.entries()) {
        if (response.statusCode === 200) {
          t.same(response.body, { name: racers[index]?.name, ...tagFor(id) })
        } else {
          t.equal(response.statusCode, 409, `id ${id}: a loser gets a 409`)
          t.same(response.body, { error: 40901, message: `a plant with id ${id} already exists with a different name or tag` })
        }
      }
      if (winners[0] !== undefined) expected.set(id, winners[0])
    } else {
      const plant = { id, name: `Unique ${id}`, ...tagFor(id) }
      const response = await send(t, instance(id), plant)
      t.equal(response.statusCode, 200, `id ${id}: created`)
      expected.set(id, plant)
    }
  })

  t.same(await database.readStoredPlants(), ids.map((id) => {
    const plant = expected.get(id)
    return { id: BigInt(id), name: plant?.name, tag: plant?.tag ?? null }
  }), 'the database holds exactly one row per id, each the acknowledged plant')

  // The migrations ran once, however the two instances interleaved.
  t.same(await runAsAdmin(`SELECT version FROM ${database.schema}.schema_migrations ORDER BY version`), migrations.map(({ version }) => ({ version })))

  for (const server of servers) server.child.kill('SIGTERM')
  t.same(await Promise.all(servers.map((server) => server.exited)), [0, 0], 'both instances stop cleanly')
})

type Write = { readonly kind: 'create', readonly name: string } | { readonly kind: 'delete' }

// What a write does to one id's plant, by the contract: a create stores a plant where there is
// none (200), is a replay of the same plant (200) or a conflict with another (409); a delete
// removes the plant (204) or finds none (404).
function apply (stored: string | null, write: Write): { status: number, stored: string | null } {
  if (write.kind === 'delete') return stored === null ? { status: 404, stored } : { status: 204, stored: null }
  if (stored === null) return { status: 200, stored: write.name }
  return { status: stored === write.name ? 200 : 409, stored }
}

// Whether some interleaving of the instances' sequences, each in its own order, run one write
// at a time from no plant, gives every status they saw and leaves what the database holds.
function isOneSerialHistory (sequences: ReadonlyArray<ReadonlyArray<{ write: Write, status: number }>>, stored: string | null): boolean {
  const search = (positions: readonly number[], state: string | null): boolean => {
    if (positions.every((position, index) => position === sequences[index]!.length)) return state === stored
    return positions.some((position, index) => {
      const step = sequences[index]![position]
      if (step === undefined) return false
      const outcome = apply(state, step.write)
      return outcome.status === step.status && search(positions.map((p, i) => (i === index ? p + 1 : p)), outcome.stored)
    })
  }
  return search(sequences.map(() => 0), null)
}

t.test('creates and deletes of one id from several instances resolve as one serial history', { skip: postgresSkipReason }, async (t) => {
  const database = await postgresTestDatabase(t)
  const environment = { DATABASE_URL: database.url, API_TOKENS: token, DATABASE_POOL_SIZE: '5' }
  const servers = await Promise.all([startServer(t, environment), startServer(t, environment), startServer(t, environment)])
  const ids = Array.from({ length: 60 }, (_, index) => 1000 + index)
  const failures: string[] = []
  await forEachConcurrently(ids, 6, async (id) => {
    // Each instance, in its own order: its plant, a delete, its plant again.
    const sequences = await Promise.all(servers.map(async (server, index) => {
      const writes: Write[] = [{ kind: 'create', name: `Instance ${index}` }, { kind: 'delete' }, { kind: 'create', name: `Instance ${index}` }]
      const seen: Array<{ write: Write, status: number }> = []
      for (const write of writes) {
        const response = write.kind === 'create'
          ? await createPlant(server.baseUrl, token, { id, name: write.name })
          : await fetch(`${server.baseUrl}/plants/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } })
        await response.arrayBuffer()
        seen.push({ write, status: response.status })
      }
      return seen
    }))
    const [row] = await runAsAdmin<{ name: string }>(`SELECT document->>'name' AS name FROM ${database.schema}.plants WHERE id = $1`, [id])
    if (!isOneSerialHistory(sequences, row?.name ?? null)) {
      failures.push(`id ${id}: ${JSON.stringify(sequences.map((sequence) => sequence.map(({ status }) => status)))}, stored ${String(row?.name)}`)
    }
  })
  t.same(failures, [], `every id's answers and stored plant are those of one serial history (${ids.length} ids, 3 instances)`)
})
