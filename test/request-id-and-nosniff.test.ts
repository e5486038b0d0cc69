import t from 'tap'
import type { PlantStore, PlantWrite } from '../src/store/plant-store.js'
import { SqlitePlantStore } from '../src/store/sqlite/sqlite-plant-store.js'
import { StoreUnavailableError } from '../src/store/store-errors.js'
import { buildTestApp } from './support/helper.js'
import { testFolder } from './support/test-folder.js'

// Every response, whatever its status, carries X-Content-Type-Options: nosniff and an
// x-request-id: the caller's when it is valid, a generated UUID otherwise.

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

t.test('every response carries nosniff and a request id', async (t) => {
  let storeFailure: Error | undefined
  // A real store whose creates fail on demand.
  const realStore = await SqlitePlantStore.open({ filename: `${testFolder(t)}/plants.db` })
  const failingStore: PlantStore = Object.assign(Object.create(realStore) as PlantStore, {
    write: async (write: PlantWrite) => {
      if (storeFailure !== undefined) throw storeFailure
      return realStore.write(write)
    },
  })
  const { send, createPlant } = await buildTestApp(t, {}, {})
  const failing = await buildTestApp(t, {}, { store: failingStore })

  const answers: Array<[number, ReturnType<typeof send>]> = [
    [200, createPlant({ id: 1, name: 'Fern' })],
    [200, send({ method: 'GET', url: '/healthz' })],
    [200, send({ method: 'GET', url: '/openapi.yaml' })],
    [400, createPlant('{"id":')],
    [400, send({ method: 'POST', url: '/plants', headers: { authorization: 'Bearer' } })],
    [401, send({ method: 'POST', url: '/plants' })],
    [404, send({ method: 'GET', url: '/nope' })],
    [405, send({ method: 'PUT', url: '/plants' })],
    [413, createPlant({ id: 2, name: 'x'.repeat(20_000) })],
    [415, createPlant('{"id":3,"name":"Fern"}', { 'content-type': 'text/plain' })],
  ]
  for (const [expected, pending] of answers) {
    const answer = await pending
    t.equal(answer.statusCode, expected)
    t.equal(answer.headers['x-content-type-options'], 'nosniff', `${expected} has nosniff`)
    t.match(answer.headers['x-request-id'], uuid, `${expected} has a request id`)
  }
  const conflict = await createPlant({ id: 1, name: 'Ivy' })
  t.equal(conflict.statusCode, 409)
  t.equal(conflict.headers['x-content-type-options'], 'nosniff', '409 has nosniff')
  t.match(conflict.headers['x-request-id'], uuid, '409 has a request id')

  for (const [expected, error] of [[500, new Error('disk on fire')], [503, new StoreUnavailableError(2)]] as const) {
    storeFailure = error
    const answer = await failing.createPlant({ id: 4, name: 'Fern' })
    t.equal(answer.statusCode, expected)
    t.equal(answer.headers['x-content-type-options'], 'nosniff', `${expected} has nosniff`)
    t.match(answer.headers['x-request-id'], uuid, `${expected} has a request id`)
  }
})

t.test('each request gets its own generated request id', async (t) => {
  const { send } = await buildTestApp(t)
  const ids = new Set<unknown>()
  for (let index = 0; index < 5; index++) {
    ids.add((await send({ method: 'GET', url: '/healthz' })).headers['x-request-id'])
  }
  t.equal(ids.size, 5)
})

t.test('a valid x-request-id sent by the caller is echoed', async (t) => {
  const { send, createPlant } = await buildTestApp(t)
  for (const id of ['abc-123', 'A.b_c:d-9', 'x'.repeat(128)]) {
    const health = await send({ method: 'GET', url: '/healthz', headers: { 'x-request-id': id } })
    t.equal(health.headers['x-request-id'], id, `${id} on a 200`)
  }
  const created = await createPlant({ id: 1, name: 'Fern' }, { 'x-request-id': 'abc-123' })
  t.equal(created.headers['x-request-id'], 'abc-123', 'on a created plant')
  const unauthorized = await send({ method: 'POST', url: '/plants', headers: { 'x-request-id': 'abc-123' } })
  t.equal(unauthorized.statusCode, 401)
  t.equal(unauthorized.headers['x-request-id'], 'abc-123', 'on a 401')
  const notFound = await send({ method: 'GET', url: '/nope', headers: { 'x-request-id': 'abc-123' } })
  t.equal(notFound.headers['x-request-id'], 'abc-123', 'on a 404')
})

t.test('an invalid x-request-id is replaced by a generated one', async (t) => {
  const { send } = await buildTestApp(t)
  for (const id of ['a'.repeat(300), 'x'.repeat(129), 'has spaces', 'abc/123', 'abc"123', '<script>', 'é']) {
    const answer = await send({ method: 'GET', url: '/healthz', headers: { 'x-request-id': id } })
    t.equal(answer.statusCode, 200)
    t.not(answer.headers['x-request-id'], id, JSON.stringify(id))
    t.match(answer.headers['x-request-id'], uuid, JSON.stringify(id))
  }
})
