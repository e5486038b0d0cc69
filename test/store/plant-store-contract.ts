import type { Test } from 'tap'
import type { PlantStore } from '../../src/store/plant-store.js'
import { createInStore, deleteFromStore, PlantConflictError, plantRow } from '../support/plant-rows.js'

// What every PlantStore must do, whatever its backend. Each backend's test file calls this
// with a function that opens a fresh, empty store of its kind.
export function testPlantStoreContract (t: Test, openEmptyStore: (t: Test) => Promise<PlantStore>): void {
  async function open (t: Test): Promise<PlantStore> {
    const store = await openEmptyStore(t)
    t.teardown(() => store.close())
    return store
  }

  t.test('a new plant is created', async (t) => {
    const store = await open(t)
    t.same(await createInStore(store, plantRow({ id: 1n, name: 'Fern', tag: 'shade' })),
      { plant: plantRow({ id: 1n, name: 'Fern', tag: 'shade' }), created: true })
  })

  t.test('an identical plant is a replay: not created again', async (t) => {
    const store = await open(t)
    await createInStore(store, plantRow({ id: 2n, name: 'Fern' }))
    t.same(await createInStore(store, plantRow({ id: 2n, name: 'Fern' })), { plant: plantRow({ id: 2n, name: 'Fern' }), created: false })
  })

  t.test('another name or tag for a taken id is a conflict and changes nothing', async (t) => {
    const store = await open(t)
    await createInStore(store, plantRow({ id: 3n, name: 'Fern', tag: 'shade' }))
    for (const other of [plantRow({ id: 3n, name: 'Palm', tag: 'shade' }), plantRow({ id: 3n, name: 'Fern' }), plantRow({ id: 3n, name: 'Fern', tag: '' })]) {
      await t.rejects(createInStore(store, other), PlantConflictError)
    }
    t.same(await createInStore(store, plantRow({ id: 3n, name: 'Fern', tag: 'shade' })),
      { plant: plantRow({ id: 3n, name: 'Fern', tag: 'shade' }), created: false }, 'the first plant is still stored')
  })

  t.test('no tag and an empty tag are different plants', async (t) => {
    const store = await open(t)
    await createInStore(store, plantRow({ id: 4n, name: 'Fern', tag: '' }))
    await t.rejects(createInStore(store, plantRow({ id: 4n, name: 'Fern' })), PlantConflictError)
  })

  t.test('every int64 id is kept exactly, including ids that differ only above 2^53', async (t) => {
    const store = await open(t)
    const ids = [-(2n ** 63n), 2n ** 63n - 1n, 2n ** 53n, 2n ** 53n + 1n, 0n, -1n]
    for (const id of ids) {
      t.equal((await createInStore(store, plantRow({ id, name: `plant ${id}` }))).created, true, `id ${id} is new`)
    }
    for (const id of ids) {
      t.equal((await createInStore(store, plantRow({ id, name: `plant ${id}` }))).created, false, `id ${id} replays`)
      await t.rejects(createInStore(store, plantRow({ id, name: 'someone else' })), PlantConflictError)
    }
  })

  t.test('text outside ASCII is kept exactly', async (t) => {
    const store = await open(t)
    const plant = plantRow({ id: 5n, name: 'Kaktus 🌵 — «Ĉapelo»', tag: '多肉植物' })
    await createInStore(store, plant)
    t.equal((await createInStore(store, plant)).created, false)
  })

  t.test('concurrent identical creates store one plant and all succeed', async (t) => {
    const store = await open(t)
    const outcomes = await Promise.all(Array.from({ length: 50 }, () => createInStore(store, plantRow({ id: 6n, name: 'Ivy' }))))
    t.equal(outcomes.filter((outcome) => outcome.created).length, 1)
  })

  t.test('concurrent different creates for one id have exactly one winner', async (t) => {
    const store = await open(t)
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, index) =>
      createInStore(store, plantRow({ id: 7n, name: `Racer ${index}` }))))
    const winners = results.flatMap((result) => result.status === 'fulfilled' ? [(JSON.parse(result.value.plant.document) as { name: string }).name] : [])
    t.equal(winners.length, 1)
    t.ok(results.every((result) => result.status === 'fulfilled' || result.reason instanceof PlantConflictError))
    t.equal((await createInStore(store, plantRow({ id: 7n, name: String(winners[0]) }))).created, false, 'the winner is stored')
  })

  t.test('a stored plant is read back by its id; an id with no plant reads as undefined', async (t) => {
    const store = await open(t)
    const ids = [-(2n ** 63n), 2n ** 63n - 1n, 2n ** 53n, 2n ** 53n + 1n]
    for (const id of ids) await createInStore(store, plantRow({ id, name: `plant ${id}`, tag: 'Ĉapelo 🌵' }))
    for (const id of ids) {
      const stored = await store.getPlant(id)
      t.equal(stored?.id, id, `id ${id}`)
      t.same(JSON.parse(stored?.document ?? 'null'), { name: `plant ${id}`, tag: 'Ĉapelo 🌵' }, `the document of ${id}`)
    }
    t.equal(await store.getPlant(7n), undefined)
  })

  t.test('reads sent together each get their own plant, or none, from one snapshot', async (t) => {
    const store = await open(t)
    const ids = Array.from({ length: 600 }, (_, index) => BigInt(index) * 2n ** 52n - 2n ** 62n)
    for (const id of ids.filter((_, index) => index % 3 !== 0)) await createInStore(store, plantRow({ id, name: `plant ${id}` }))
    const read = await Promise.all(ids.map(async (id) => store.getPlant(id)))
    t.same(read, ids.map((id, index) => index % 3 === 0 ? undefined : plantRow({ id, name: `plant ${id}` })),
      'more than one batch holds, each read its own answer')
  })

  t.test('a plant read back is the one first stored, not one refused as a conflict', async (t) => {
    const store = await open(t)
    await createInStore(store, plantRow({ id: 8n, name: 'Fern' }))
    await t.rejects(createInStore(store, plantRow({ id: 8n, name: 'Palm' })), PlantConflictError)
    t.same(await store.getPlant(8n), plantRow({ id: 8n, name: 'Fern' }), 'in the canonical form it was stored in')
  })

  t.test('a page holds plants in ascending order of id, after the cursor, and says whether more follow', async (t) => {
    const store = await open(t)
    const ids = [2n ** 63n - 1n, -(2n ** 63n), 2n ** 53n + 1n, -1n, 0n, 2n ** 53n]
    for (const id of ids) await createInStore(store, plantRow({ id, name: `plant ${id}` }))
    const idsOf = (plants: ReadonlyArray<{ id: bigint }>): bigint[] => plants.map(({ id }) => id)
    const first = await store.listPlants(undefined, 4)
    t.same(idsOf(first.plants), [-(2n ** 63n), -1n, 0n, 2n ** 53n])
    t.equal(first.more, true)
    t.same(first.plants[0], plantRow({ id: -(2n ** 63n), name: `plant ${-(2n ** 63n)}` }), 'each in the canonical form it was stored in')
    const rest = await store.listPlants(2n ** 53n, 4)
    t.same([idsOf(rest.plants), rest.more], [[2n ** 53n + 1n, 2n ** 63n - 1n], false])
    const exact = await store.listPlants(-1n, 2)
    t.same([idsOf(exact.plants), exact.more], [[0n, 2n ** 53n], true], 'a page that stops one short of the end')
    t.same(await store.listPlants(2n ** 63n - 1n, 10), { plants: [], more: false }, 'past the last plant')
  })

  t.test('a deleted plant is gone, its id free again; deleting an id with no plant says so', async (t) => {
    const store = await open(t)
    await createInStore(store, plantRow({ id: 2n ** 53n + 1n, name: 'Aloe' }))
    await createInStore(store, plantRow({ id: 2n ** 53n, name: 'Neighbour' }))
    t.equal(await deleteFromStore(store, 2n ** 53n + 1n), true)
    t.equal(await store.getPlant(2n ** 53n + 1n), undefined)
    t.equal(await deleteFromStore(store, 2n ** 53n + 1n), false, 'a second time: nothing to delete')
    t.same(await store.getPlant(2n ** 53n), plantRow({ id: 2n ** 53n, name: 'Neighbour' }), 'the neighbour below is untouched')
    t.same(await createInStore(store, plantRow({ id: 2n ** 53n + 1n, name: 'Another' })),
      { plant: plantRow({ id: 2n ** 53n + 1n, name: 'Another' }), created: true }, 'a new plant under the deleted id')
  })

  t.test('creates and deletes of one id, sent together, take effect in arrival order', async (t) => {
    const store = await open(t)
    await createInStore(store, plantRow({ id: 9n, name: 'Old' }))
    const settled = await Promise.allSettled([
      deleteFromStore(store, 9n), createInStore(store, plantRow({ id: 9n, name: 'New' })), createInStore(store, plantRow({ id: 9n, name: 'Other' })),
      deleteFromStore(store, 9n), deleteFromStore(store, 9n), createInStore(store, plantRow({ id: 9n, name: 'Last' })),
      createInStore(store, plantRow({ id: 10n, name: 'Else' })), deleteFromStore(store, 11n),
    ])
    t.same(settled.map((result) => result.status === 'fulfilled'
      ? (typeof result.value === 'boolean' ? result.value : result.value.created)
      : result.reason instanceof PlantConflictError ? 'conflict' : result.reason),
    [true, true, 'conflict', true, false, true, true, false])
    t.same(await store.getPlant(9n), plantRow({ id: 9n, name: 'Last' }))
  })

  t.test('a delete with a condition deletes only a plant that meets it', async (t) => {
    const store = await open(t)
    await createInStore(store, plantRow({ id: 15n, name: 'Fern' }))
    const given: string[] = []
    const refuse = (document: string): boolean => { given.push(document); return false }
    t.equal(await store.write({ kind: 'delete', id: 15n, condition: refuse }), 'condition-failed')
    t.same(given, [plantRow({ id: 15n, name: 'Fern' }).document], 'the condition is given the stored document as the service answers it')
    t.equal(await store.write({ kind: 'delete', id: 16n, condition: refuse }), 'absent', 'no plant: nothing to ask')
    t.equal(await store.write({ kind: 'delete', id: 15n, condition: () => true }), 'deleted')
  })

  t.test('updates and conditions of one id, sent together, take effect in arrival order', async (t) => {
    const store = await open(t)
    const old = plantRow({ id: 12n, name: 'Old' })
    const oldOnly = (document: string): boolean => document === old.document
    const update = (name: string, condition?: (document: string) => boolean) =>
      store.write({ kind: 'update', id: 12n, document: plantRow({ id: 12n, name }).document, condition })
    const results = await Promise.all([
      update('Early'), store.write({ kind: 'create', id: 12n, document: old.document }),
      update('New', oldOnly), update('Newer', oldOnly), update('New'),
      store.write({ kind: 'delete', id: 12n, condition: oldOnly }), store.write({ kind: 'delete', id: 12n, condition: () => true }),
      update('Late'), store.write({ kind: 'create', id: 13n, document: plantRow({ id: 13n, name: 'Else' }).document }),
      store.write({ kind: 'delete', id: 13n, condition: (document) => document.includes('Else') }),
    ])
    t.same(results, ['absent', 'created', 'updated', 'condition-failed', 'unchanged', 'condition-failed', 'deleted', 'absent', 'created', 'deleted'])
    t.same(await store.listPlants(undefined, 10), { plants: [], more: false })
  })

  t.test('an update replaces the stored document; the same document again writes nothing', async (t) => {
    const store = await open(t)
    await createInStore(store, plantRow({ id: 14n, name: 'Fern', tag: 'shade' }))
    const fern = plantRow({ id: 14n, name: 'Fern' })
    t.equal(await store.write({ kind: 'update', id: 14n, document: fern.document }), 'updated')
    t.same(await store.getPlant(14n), fern, 'in the canonical form it was stored in')
    t.equal(await store.write({ kind: 'update', id: 14n, document: fern.document }), 'unchanged')
    t.equal(await store.write({ kind: 'update', id: 14n, document: fern.document, condition: (document) => document === fern.document }), 'unchanged',
      'the condition is given the stored document as the service answers it')
  })

  t.test('a ready store says so', async (t) => {
    const store = await open(t)
    await t.resolves(store.checkReady())
  })
}
