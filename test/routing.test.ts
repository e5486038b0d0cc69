import { readFileSync } from 'node:fs'
import t from 'tap'
import { createOperationHandlers } from '../src/handlers/operation-handlers.js'
import { findOpenApiFile, listOperations, loadOpenApiDocument } from '../src/spec/openapi-document.js'
import type { PlantStore } from '../src/store/plant-store.js'
import { SqlitePlantStore } from '../src/store/sqlite/sqlite-plant-store.js'
import { StoreUnavailableError } from '../src/store/store-errors.js'
import { buildTestApp, testToken } from './support/helper.js'

// The routes come from openapi.yaml alone: what it declares answers, an undeclared path is a
// 404 and an undeclared method on a declared path is a 405 naming the methods it does declare.

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const authorization = `Bearer ${testToken}`

t.test('an undeclared path is a 404 40401 with the Error body', async (t) => {
  const { send } = await buildTestApp(t)
  for (const url of ['/nope', '/plants/1', '/plants/', '/PLANTS', '/healthz/', '/']) {
    for (const method of ['GET', 'POST'] as const) {
      const answer = await send({ method, url, headers: { authorization } })
      t.equal(answer.statusCode, 404, `${method} ${url}`)
      t.match(answer.body, { error: 40401, message: String }, `${method} ${url}`)
      t.equal(answer.headers.allow, undefined, `${method} ${url} has no Allow header`)
    }
  }
})

t.test('every method /plants does not declare is a 405 40501 with Allow: POST', async (t) => {
  const { send, app } = await buildTestApp(t)
  for (const method of ['GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'] as const) {
    const answer = await send({ method, url: '/plants', headers: { authorization } })
    t.equal(answer.statusCode, 405, method)
    t.match(answer.body, { error: 40501, message: String }, method)
    t.equal(answer.headers.allow, 'POST', method)
  }

  for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
    const answer = await send({
      method,
      url: '/plants',
      headers: { authorization, 'content-type': 'application/json' },
      payload: '{"id":1,"name":"Fern"}',
    })
    t.equal(answer.statusCode, 405, `${method} with a valid NewPlant body`)
    t.equal(answer.headers.allow, 'POST', `${method} with a valid NewPlant body`)
  }

  // A HEAD answer has no body, so it cannot be parsed as the Error body.
  const head = await app.inject({ method: 'HEAD', url: '/plants', headers: { authorization } })
  t.equal(head.statusCode, 405, 'HEAD')
  t.equal(head.headers.allow, 'POST', 'HEAD')
  t.equal(head.body, '', 'HEAD has no body')
})

t.test('an undeclared method is a 405 even without credentials', async (t) => {
  const { send } = await buildTestApp(t)
  const answer = await send({ method: 'PUT', url: '/plants' })
  t.equal(answer.statusCode, 405)
  t.match(answer.body, { error: 40501 })
  t.equal(answer.headers.allow, 'POST')
  t.equal(answer.headers['www-authenticate'], undefined)
})

t.test('a method the operational endpoints do not declare is a 405 with Allow: GET', async (t) => {
  const { send } = await buildTestApp(t)
  for (const url of ['/healthz', '/readyz', '/openapi.json', '/openapi.yaml']) {
    for (const method of ['POST', 'PUT', 'DELETE'] as const) {
      const answer = await send({ method, url, headers: { authorization, 'content-type': 'application/json' }, payload: '{}' })
      t.equal(answer.statusCode, 405, `${method} ${url}`)
      t.match(answer.body, { error: 40501 }, `${method} ${url}`)
      t.equal(answer.headers.allow, 'GET', `${method} ${url}`)
    }
  }
})

t.test('every response carries nosniff and a request id', async (t) => {
  let storeFailure: Error | undefined
  const failingStore: PlantStore = {
    createPlant: async () => {
      if (storeFailure !== undefined) throw storeFailure
      return { plant: { id: 1n, name: 'Fern' }, created: true }
    },
    checkReady: async () => undefined,
    close: async () => undefined,
  }
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
    [405, send({ method: 'GET', url: '/plants' })],
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

t.test('GET /healthz answers 200 {status: "ok"} without credentials', async (t) => {
  const { send } = await buildTestApp(t)
  const answer = await send({ method: 'GET', url: '/healthz' })
  t.equal(answer.statusCode, 200)
  t.strictSame(answer.body, { status: 'ok' })
})

t.test('GET /readyz answers 200 {status: "ready"} without credentials', async (t) => {
  const { send } = await buildTestApp(t)
  const answer = await send({ method: 'GET', url: '/readyz' })
  t.equal(answer.statusCode, 200)
  t.strictSame(answer.body, { status: 'ready' })
})

t.test('public endpoints ignore credentials, even invalid ones', async (t) => {
  const { send } = await buildTestApp(t)
  for (const header of ['Bearer unknown-token', 'Bearer', 'Basic dXNlcjpwYXNz']) {
    const answer = await send({ method: 'GET', url: '/healthz', headers: { authorization: header } })
    t.equal(answer.statusCode, 200, header)
    t.equal(answer.headers['www-authenticate'], undefined, header)
  }
})

t.test('GET /openapi.json answers the parsed openapi.yaml without credentials', async (t) => {
  const { send } = await buildTestApp(t)
  const answer = await send({ method: 'GET', url: '/openapi.json' })
  t.equal(answer.statusCode, 200)
  t.match(answer.headers['content-type'], /^application\/json/)
  t.strictSame(answer.body, loadOpenApiDocument().document)
})

t.test('GET /openapi.yaml answers openapi.yaml byte for byte without credentials', async (t) => {
  const { send } = await buildTestApp(t)
  const fileBytes = readFileSync(findOpenApiFile())
  const answer = await send({ method: 'GET', url: '/openapi.yaml' })
  t.equal(answer.statusCode, 200)
  t.match(answer.headers['content-type'], /^application\/yaml(;|$)/)
  t.equal(answer.response.body, fileBytes.toString('utf8'))
  t.ok(answer.response.rawPayload.equals(fileBytes), 'the bytes are the file\'s bytes')
})

t.test('BASE_PATH prefixes every route', async (t) => {
  const { app, send, createPlant } = await buildTestApp(t, { BASE_PATH: '/api/v1' })

  const created = await createPlant({ id: 1, name: 'Fern' })
  t.equal(created.response.raw.req.url, '/api/v1/plants', 'createPlant sent to the prefixed path')
  t.equal(created.statusCode, 200)
  t.strictSame(created.body, { name: 'Fern' })

  const unprefixed = await app.inject({
    method: 'POST',
    url: '/plants',
    headers: { authorization, 'content-type': 'application/json' },
    payload: '{"id":2,"name":"Ivy"}',
  })
  t.equal(unprefixed.statusCode, 404, 'POST /plants without the prefix')
  t.match(unprefixed.json(), { error: 40401, message: String })

  const unprefixedHealth = await app.inject({ method: 'GET', url: '/healthz' })
  t.equal(unprefixedHealth.statusCode, 404, 'GET /healthz without the prefix')
  t.match(unprefixedHealth.json(), { error: 40401, message: String })

  const wrongMethod = await send({ method: 'GET', url: '/api/v1/plants', headers: { authorization } })
  t.equal(wrongMethod.statusCode, 405)
  t.match(wrongMethod.body, { error: 40501 })
  t.equal(wrongMethod.headers.allow, 'POST')

  const health = await send({ method: 'GET', url: '/api/v1/healthz' })
  t.equal(health.statusCode, 200)
  t.strictSame(health.body, { status: 'ok' })

  const readiness = await send({ method: 'GET', url: '/api/v1/readyz' })
  t.equal(readiness.statusCode, 200)

  const unknown = await send({ method: 'GET', url: '/api/v1/nope' })
  t.equal(unknown.statusCode, 404)
  t.match(unknown.body, { error: 40401 })
})

t.test('every operationId of openapi.yaml has a handler, and every handler an operation', async (t) => {
  const store = new SqlitePlantStore({ filename: `${t.testdir()}/plants.db` })
  t.teardown(() => store.close())
  const openApi = loadOpenApiDocument()
  const handlers: Record<string, unknown> = createOperationHandlers({ store, openApi })

  const operationIds = listOperations(openApi.document).map(({ operation }) => operation.operationId)
  t.ok(operationIds.length > 0, 'the spec declares operations')
  for (const operationId of operationIds) {
    if (operationId === undefined) {
      t.fail('an operation has no operationId')
      continue
    }
    t.ok(Object.hasOwn(handlers, operationId), `${operationId} has a handler`)
    t.type(handlers[operationId], 'function', `${operationId}'s handler is a function`)
  }
  t.strictSame(Object.keys(handlers).sort(), [...operationIds].sort(), 'no handler without an operation')
})

t.test('buildApp refuses to start when the spec declares an operation with no handler, and closes its store', async (t) => {
  const { document } = loadOpenApiDocument()
  const modified = structuredClone(document)
  ;(modified.paths as Record<string, unknown>)['/extra'] = {
    get: { operationId: 'getExtra', security: [], responses: { 200: { description: 'x' } } },
  }
  const store = new SqlitePlantStore({ filename: `${t.testdir()}/plants.db` })
  await t.rejects(buildTestApp(t, {}, { store, openApi: { document: modified, yamlText: '' } }), {
    message: /no handler: .*getExtra/,
  })
  await t.rejects(store.createPlant({ id: 1n, name: 'Fern' }), StoreUnavailableError, 'the store it was given is closed again')
})

t.test('404 and 405 are decided before any body is read, whatever the body', async (t) => {
  const { send } = await buildTestApp(t, { BODY_LIMIT: 1024 })
  const bodies: Array<{ headers: Record<string, string>, payload?: string }> = [
    { headers: { 'content-type': 'text/plain' }, payload: 'hello' },
    { headers: { 'content-type': 'application/json' }, payload: '{bad' },
    { headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ pad: 'x'.repeat(5000) }) },
    { headers: { 'content-type': 'application/json' } },
  ]
  const requests = [
    { method: 'PUT', url: '/plants', status: 405, allow: 'POST' },
    { method: 'DELETE', url: '/plants', status: 405, allow: 'POST' },
    { method: 'OPTIONS', url: '/plants', status: 405, allow: 'POST' },
    { method: 'POST', url: '/healthz', status: 405, allow: 'GET' },
    { method: 'POST', url: '/nope', status: 404, allow: undefined },
  ] as const
  for (const { method, url, status, allow } of requests) {
    for (const body of bodies) {
      const answer = await send({ method, url, ...body })
      const label = `${method} ${url} with ${body.headers['content-type']} ${body.payload?.slice(0, 10) ?? '(no body)'}`
      t.equal(answer.statusCode, status, label)
      t.equal(answer.headers.allow, allow, label)
    }
  }
})

t.test('a method Fastify does not route is still a 405 on a declared path', async (t) => {
  const { send } = await buildTestApp(t)
  for (const method of ['PROPFIND', 'SEARCH', 'MKCOL', 'LOCK', 'QUERY'] as const) {
    const answer = await send({ method, url: '/plants', headers: { authorization } })
    t.equal(answer.statusCode, 405, method)
    t.equal(answer.headers.allow, 'POST', method)
  }
})

t.test('a 404 message names the path without its query string', async (t) => {
  const { send } = await buildTestApp(t)
  const answer = await send({ method: 'GET', url: '/nope?access_token=secret-in-query' })
  t.same(answer.body, { error: 40401, message: 'no route for GET /nope' })
})

t.test('a percent-encoded path is routed as the router decodes it', async (t) => {
  const { send } = await buildTestApp(t)
  const answer = await send({ method: 'GET', url: '/pl%61nts' })
  t.equal(answer.statusCode, 405)
  t.equal(answer.headers.allow, 'POST')
})
