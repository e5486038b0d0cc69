import { gzipSync } from 'node:zlib'
import t from 'tap'
import { listOperations, loadOpenApiDocument } from '../src/openapi/openapi-document.js'
import { buildTestApp, testToken } from './support/helper.js'
import { checkAgainstSpec, createHeaders, startListening, request } from './support/raw-http.js'
import { startWebhookReceiver } from './support/webhook-receiver.js'
import { asManager, registerEndpoint, webhookTestSettings } from './support/webhooks.js'

// An operation that declares no request body reads none, as a GET does: whatever a request sends
// with it is left unread, and the request is answered as it would be without. (Fastify parses a
// DELETE's or POST's body; it answered such bodies with 400, 413 and 415, which these operations
// do not declare.)

const authorization = `Bearer ${testToken}`

// Bodies a client might send by mistake, or on purpose, with their headers.
const strayBodies: ReadonlyArray<readonly [string, Record<string, string>, string | Buffer]> = [
  ['text/plain', { 'content-type': 'text/plain' }, 'hello'],
  ['no Content-Type', {}, 'hello'],
  ['an invalid media type', { 'content-type': 'x' }, 'hello'],
  ['an empty application/json body', { 'content-type': 'application/json' }, ''],
  ['malformed JSON', { 'content-type': 'application/json' }, '{"id":'],
  ['gzip', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, gzipSync('{}')],
  ['20,000 bytes, over the body limit', { 'content-type': 'application/json' }, JSON.stringify({ padding: 'p'.repeat(20_000) })],
  ['ISO-8859-1', { 'content-type': 'application/json; charset=iso-8859-1' }, '{}'],
]

// Each operation of the spec with no request body and a method Fastify reads bodies of, with
// a path of an id nothing has.
const absentIds: Record<string, string> = { id: '3f0b1c52-5d7e-4a8e-9b43-2f6e1a9c7d10' }
const bodilessOperations = listOperations(loadOpenApiDocument().document)
  .filter(({ method, operation }) => operation.requestBody === undefined && method !== 'get' && method !== 'head')

t.test('every operation that declares no body answers a request with a stray body as one without', async (t) => {
  t.ok(bodilessOperations.length >= 3, 'deletePlant, deleteWebhookEndpoint, rotateWebhookEndpointSecret at least')
  const app = await buildTestApp(t, webhookTestSettings)
  for (const { method, path, operation } of bodilessOperations) {
    const url = path.replace(/{(\w+)}/g, (_, name: string) => path.startsWith('/plants') ? '5' : absentIds[name] ?? '1')
    const without = await app.send({ method: method.toUpperCase() as 'DELETE', url, headers: { authorization } })
    for (const [what, headers, payload] of strayBodies) {
      const answer = await app.send({ method: method.toUpperCase() as 'DELETE', url, headers: { authorization, ...headers }, payload })
      t.same([answer.statusCode, answer.body], [without.statusCode, without.body], `${operation.operationId}, ${what}: answered as without a body`)
    }
  }
})

t.test('a stray body does not keep a plant from being deleted, nor an endpoint\'s secret from being rotated', async (t) => {
  const app = await buildTestApp(t, webhookTestSettings)
  const receiver = await startWebhookReceiver(t)
  const endpoint = await registerEndpoint(t, app, `${receiver.url}/hook`)
  for (const [index, [what, headers, payload]] of strayBodies.entries()) {
    const id = index + 1
    t.equal((await app.createPlant({ id, name: 'Fern' })).statusCode, 200)
    const deleted = await app.send({ method: 'DELETE', url: `/plants/${id}`, headers: { authorization, ...headers }, payload })
    t.equal(deleted.statusCode, 204, `deletePlant with ${what}: 204`)
    t.equal((await app.send({ method: 'GET', url: `/plants/${id}`, headers: { authorization } })).statusCode, 404, 'and the plant is gone')
    const rotated = await app.send({ method: 'POST', url: `/webhook-endpoints/${endpoint.id}/rotate-secret`, headers: { ...asManager, ...headers }, payload })
    t.equal(rotated.statusCode, 200, `rotateWebhookEndpointSecret with ${what}: 200`)
  }
  const deleted = await app.send({ method: 'DELETE', url: `/webhook-endpoints/${endpoint.id}`, headers: { ...asManager, 'content-type': 'text/plain' }, payload: 'bye' })
  t.equal(deleted.statusCode, 204, 'deleteWebhookEndpoint with a text/plain body: 204')
})

t.test('a stray body is read past and discarded on the connection: the requests pipelined behind it are answered', async (t) => {
  const { open } = await startListening(t)
  const client = open()
  const large = 'x'.repeat(100_000)
  client.write([
    request('DELETE', '/plants/7', createHeaders({ 'Content-Type': 'text/plain', 'Content-Length': String(large.length) }), large),
    request('DELETE', '/plants/8', createHeaders({ 'Transfer-Encoding': 'chunked' }), '5\r\nhello\r\n0\r\n\r\n'),
    request('GET', '/healthz', { Host: 'plants.test', Connection: 'close' }),
  ].join(''))
  const responses = await client.received(10_000)
  t.same(responses.map((response) => response.statusCode), [404, 404, 200], 'each answered, in order')
  responses.forEach((response, index) => { checkAgainstSpec(t, index < 2 ? 'DELETE' : 'GET', index < 2 ? `/plants/${7 + index}` : '/healthz', response) })
  t.same(responses.slice(0, 2).map((response) => response.headers.connection), ['keep-alive', 'keep-alive'], 'and the connection kept')
})

t.test('a stray body still arriving when its request is answered: the connection is kept, and a body that then stalls closes it without a second answer', async (t) => {
  const { open } = await startListening(t, { REQUEST_TIMEOUT: 600 })
  for (const method of ['DELETE', 'GET']) {
    const client = open()
    client.write(request(method, '/plants/7', createHeaders({ 'Content-Type': 'text/plain', 'Content-Length': '10' }), 'hello'))
    await new Promise((resolve) => setTimeout(resolve, 200))
    const [answered] = client.receivedSoFar()
    t.same([answered?.statusCode, answered?.headers.connection], [404, 'keep-alive'], `${method}: answered before the body arrived, and kept`)
    client.write('world' + request('GET', '/healthz', { Host: 'plants.test' }))
    await new Promise((resolve) => setTimeout(resolve, 200))
    t.same(client.receivedSoFar().map((response) => response.statusCode), [404, 200], `${method}: the rest of the body is read past to the next request`)
  }

  const stalled = open()
  stalled.write(request('DELETE', '/plants/8', createHeaders({ 'Content-Type': 'text/plain', 'Content-Length': '10' }), 'hello'))
  const responses = await stalled.received(3000)
  t.same(responses.map((response) => response.statusCode), [404], 'the body timed out after its answer: closed, with no 408 taken for another answer')
})

t.test('a stray body is not read for a request refused before the operation\'s steps pass, nor invited by 100 Continue', async (t) => {
  const { open } = await startListening(t)
  const anonymous = open()
  anonymous.write(request('DELETE', '/plants/7', { Host: 'plants.test', 'Content-Type': 'text/plain', 'Content-Length': '100000' }, 'hello'))
  const [refused] = await anonymous.received(3000)
  t.same([refused?.statusCode, refused?.headers.connection], [401, 'close'], 'no credentials: 401, and the connection closed rather than the body read')

  for (const method of ['DELETE', 'GET']) {
    const expecting = open()
    expecting.write(request(method, '/plants/7', createHeaders({ 'Content-Type': 'text/plain', 'Content-Length': '5', Expect: '100-continue' })))
    await new Promise((resolve) => setTimeout(resolve, 300))
    t.same(expecting.receivedSoFar().map((response) => response.statusCode), [404], `${method}: answered at once, with no 100 Continue first`)
  }
})
