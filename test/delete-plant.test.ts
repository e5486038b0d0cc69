import t from 'tap'
import { buildTestApp, testToken } from './support/helper.js'
import { testOnEveryBackend } from './support/test-databases.js'

// DELETE /plants/{id}: 204 with no body once the deletion is durable, 404 when no plant has the
// id, a path id read as getPlant reads it, and a deleted id free for a new plant.

const asCaller = { authorization: `Bearer ${testToken}` }

testOnEveryBackend(t, 'a deleted plant is gone, across a restart, and its id is free again', async (t, database) => {
  const first = await buildTestApp(t, { DATABASE_URL: database.url })
  await first.createPlant('{"id":9007199254740993,"name":"Aloe"}')
  await first.createPlant('{"id":9007199254740992,"name":"Neighbour"}')
  const deleted = await first.send({ method: 'DELETE', url: '/plants/9007199254740993', headers: asCaller })
  t.equal(deleted.statusCode, 204)
  t.equal(deleted.response.body, '', 'no body')
  t.equal(deleted.headers['content-type'], undefined, 'and no media type')
  t.equal((await first.send({ method: 'GET', url: '/plants/9007199254740993', headers: asCaller })).statusCode, 404)
  const again = await first.send({ method: 'DELETE', url: '/plants/9007199254740993', headers: asCaller })
  t.same([again.statusCode, again.body], [404, { error: 40401, message: 'no plant has id 9007199254740993' }], 'a second delete: 404')
  await first.app.close()

  const restarted = await buildTestApp(t, { DATABASE_URL: database.url })
  t.equal((await restarted.send({ method: 'GET', url: '/plants/9007199254740993', headers: asCaller })).statusCode, 404, 'still gone after a restart')
  t.equal((await restarted.send({ method: 'GET', url: '/plants/9007199254740992', headers: asCaller })).statusCode, 200, 'its neighbour, one below, untouched')
  const recreated = await restarted.createPlant('{"id":9007199254740993,"name":"Another"}')
  t.same([recreated.statusCode, recreated.body], [200, { name: 'Another' }], 'a create of the deleted id stores a new plant, whatever the old held')
  t.same((await database.readStoredPlants()).map(({ id, name }) => [id, name]),
    [[9007199254740992n, 'Neighbour'], [9007199254740993n, 'Another']])
})

testOnEveryBackend(t, 'one id\'s history: created, replayed, refused, deleted, created again', async (t, database) => {
  const { createPlant, send } = await buildTestApp(t, { DATABASE_URL: database.url })
  await createPlant({ id: 5, name: 'Old' })
  const remove = async () => send({ method: 'DELETE', url: '/plants/5', headers: asCaller })
  // One after the other; test/store/plant-store-contract.ts holds the stores to the same history
  // when the writes share a batch.
  const statuses: number[] = []
  for (const write of [
    remove, () => createPlant({ id: 5, name: 'New' }), () => createPlant({ id: 5, name: 'New' }), () => createPlant({ id: 5, name: 'Other' }),
    remove, remove, () => createPlant({ id: 5, name: 'Last' }), () => createPlant({ id: 6, name: 'Else' }),
  ]) statuses.push((await write()).statusCode)
  t.same(statuses, [204, 200, 200, 409, 204, 404, 200, 200])
  t.same((await database.readStoredPlants()).map(({ id, name }) => [id, name]), [[5n, 'Last'], [6n, 'Else']])
})

t.test('a path id is read as getPlant reads it', async (t) => {
  const { createPlant, send } = await buildTestApp(t)
  await createPlant({ id: 1000, name: 'Thousand' })
  const cases: Array<[string, number, number | undefined]> = [
    ['abc', 400, 40003], ['1.5', 400, 40003], ['007', 400, 40003], ['', 400, 40003],
    ['9223372036854775808', 400, 40004], ['1e3', 204, undefined], ['1e3', 404, 40401],
  ]
  for (const [id, status, code] of cases) {
    const answer = await send({ method: 'DELETE', url: `/plants/${id}`, headers: asCaller })
    t.equal(answer.statusCode, status, `${JSON.stringify(id)}: ${status}`)
    if (code !== undefined) t.equal((answer.body as { error: number }).error, code)
  }
})

t.test('deleting takes the bearer token, checked before the id', async (t) => {
  const { send } = await buildTestApp(t)
  const anonymous = await send({ method: 'DELETE', url: '/plants/abc' })
  t.same([anonymous.statusCode, (anonymous.body as { error: number }).error], [401, 40101])
})
