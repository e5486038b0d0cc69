import t, { type Test } from 'tap'
import { PostgresPlantStore } from '../../src/store/postgres/postgres-plant-store.js'
import type { PlantStore } from '../../src/store/plant-store.js'
import { SqlitePlantStore } from '../../src/store/sqlite/sqlite-plant-store.js'
import type { Outbox } from '../../src/store/outbox.js'
import { beforeEveryMessage } from '../../src/store/webhook-store.js'
import { createInStore, plantRow } from '../support/plant-rows.js'
import { postgresSkipReason, postgresTestDatabase } from '../support/test-databases.js'
import { testFolder } from '../support/test-folder.js'

// An endpoint's due messages are read in pages that go on from where the last ended
// (src/webhooks/endpoint-delivery.ts): each page holds the messages after the given place, in
// the order of (nextAttemptAt, seq), and none not yet due.

const endpointId = '00000000-0000-4000-8000-000000000001'
const now = 1_000_000

// A message for every plant created, due when the plant's tag says. Each plant is created in a
// batch of its own: a store that writes a batch's messages together (SQLite) asks when they are
// due with the commit's time alone, and is answered the time of the plant being created.
let dueAtOfPlantBeingCreated = now
const outboxDueAtTag: Outbox = {
  wants: () => true,
  messagesOf: (_change, plant) => [{
    messageId: `msg_${plant.id}`,
    event: 'newPlant',
    plant,
    traceparent: undefined,
    dueAt: Number(JSON.parse(plant.document).tag),
  }],
  webhooksOf: () => ['newPlant'],
  firstAttemptAt: () => dueAtOfPlantBeingCreated,
  committed: () => undefined,
}

async function storeWithMessages (store: PlantStore, dueAts: readonly number[]): Promise<void> {
  await store.webhooks.createEndpoint({ id: endpointId, url: 'http://127.0.0.1:1/hook', events: null, secret: 'whsec_x', createdAt: now })
  store.useOutbox(outboxDueAtTag)
  for (const [index, dueAt] of dueAts.entries()) {
    dueAtOfPlantBeingCreated = dueAt
    await createInStore(store, plantRow({ id: BigInt(index + 1), name: 'Fern', tag: String(dueAt) }))
  }
}

function testDueMessages (t: Test, openStore: (t: Test) => Promise<PlantStore>): void {
  t.test('pages go on from the given place, in due order, and leave out what is not yet due', async (t) => {
    const store = await openStore(t)
    // Plants 1 to 5: due at now - 30, now - 10, now - 20, now - 10, and one a minute ahead.
    await storeWithMessages(store, [now - 30, now - 10, now - 20, now - 10, now + 60_000])
    // Each message told apart by its plant.
    const ids = (messages: ReadonlyArray<{ plant: { id: bigint } }>): string[] => messages.map(({ plant }) => `msg_${plant.id}`)

    const all = await store.webhooks.dueMessages(endpointId, now, beforeEveryMessage, 10)
    t.same(ids(all), ['msg_1', 'msg_3', 'msg_2', 'msg_4'])
    t.same(all.map(({ nextAttemptAt }) => nextAttemptAt), [now - 30, now - 20, now - 10, now - 10])

    const firstPage = await store.webhooks.dueMessages(endpointId, now, beforeEveryMessage, 2)
    t.same(ids(firstPage), ['msg_1', 'msg_3'])
    const last = firstPage.at(-1)!
    const secondPage = await store.webhooks.dueMessages(endpointId, now, { nextAttemptAt: last.nextAttemptAt, seq: last.seq }, 2)
    t.same(ids(secondPage), ['msg_2', 'msg_4'], 'the next page starts after the last one read')
    const afterTies = await store.webhooks.dueMessages(endpointId, now, { nextAttemptAt: now - 10, seq: all[2]!.seq }, 10)
    t.same(ids(afterTies), ['msg_4'], 'messages due at the same time are told apart by seq')

    t.same(ids(await store.webhooks.dueMessages(endpointId, now + 60_000, { nextAttemptAt: now - 10, seq: all[3]!.seq }, 10)), ['msg_5'],
      'a message becomes due when its time comes')
  })
}

t.test('SQLite', async (t) => {
  testDueMessages(t, async (t) => {
    const store = await SqlitePlantStore.open({ filename: `${testFolder(t)}/plants.db` })
    t.teardown(() => store.close())
    return store
  })
})

t.test('PostgreSQL', { skip: postgresSkipReason }, async (t) => {
  testDueMessages(t, async (t) => {
    const database = await postgresTestDatabase(t)
    const store = await PostgresPlantStore.open({ connectionString: database.url, poolSize: 2 })
    t.teardown(() => store.close())
    return store
  })
})
