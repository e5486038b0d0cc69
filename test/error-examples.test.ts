import { createServer } from 'node:http'
import { type AddressInfo, connect } from 'node:net'
import type { InjectOptions } from 'fastify'
import t, { type Test } from 'tap'
import { issueManagedToken } from '../src/auth/managed-token.js'
import { listOperations, loadOpenApiDocument, resolveLocalRef } from '../src/openapi/openapi-document.js'
import { Database } from '../src/store/sqlite/sqlite-driver.js'
import { SqlitePlantStore } from '../src/store/sqlite/sqlite-plant-store.js'
import { assertExchangeMatchesSpec } from './support/contract.js'
import { buildTestApp, testToken } from './support/helper.js'
import { signingKey, signJwt, testAudience, testIssuer } from './support/jwt-keys.js'
import { testFolder } from './support/test-folder.js'

// The reference shows an example for every failure an operation declares, so each error
// response must have one, and each must be an answer the service really gives: every example
// below is compared with an answer provoked from the service, so none can drift into a
// placeholder or an old wording.

interface ErrorBody {
  readonly error: number
  readonly message: string
}

interface ErrorExample {
  readonly where: string
  readonly status: number
  readonly value: ErrorBody
}

interface ResponseObject {
  readonly $ref?: string
  readonly content?: Record<string, { examples?: Record<string, { value: ErrorBody }> }>
}

const { document } = loadOpenApiDocument()

// Every error response of every operation, with the examples it shows (none, if it has none).
const errorResponses = listOperations(document).flatMap(({ path, method, operation }) => {
  const responses = (operation as { responses: Record<string, ResponseObject> }).responses
  return Object.entries(responses).filter(([status]) => Number(status) >= 400).map(([status, declared]) => {
    const response = (declared.$ref === undefined ? declared : resolveLocalRef(document, declared.$ref)) as ResponseObject
    const examples = Object.entries(response.content?.['application/json']?.examples ?? {})
    return {
      where: `${method.toUpperCase()} ${path} ${status}`,
      status: Number(status),
      examples: examples.map(([name, { value }]): ErrorExample => ({ where: `${declared.$ref ?? path} ${name}`, status: Number(status), value })),
    }
  })
})

t.test('every error response of every operation shows at least one example, of its own status', async (t) => {
  t.ok(errorResponses.length > 0, 'the spec declares error responses')
  for (const { where, status, examples } of errorResponses) {
    t.ok(examples.length > 0, `${where} has an example`)
    for (const example of examples) {
      t.equal(Math.floor(example.value.error / 100), status, `${example.where}: code ${example.value.error} under ${status}`)
    }
  }
})

t.test('every error example is an answer the service gives', async (t) => {
  const answers = (await Promise.all([
    requestAnswers(t), credentialAnswers(t), rateLimitAnswers(t), storeAnswers(t), identityProviderAnswers(t), connectionAnswers(t),
  ])).flat() as ErrorBody[]
  const examples = new Map(errorResponses.flatMap(({ examples }) => examples).map((example) => [example.where, example]))
  for (const { where, value } of examples.values()) {
    t.ok(answers.some((answer) => answer.error === value.error && answer.message === value.message),
      `${where}: ${JSON.stringify(value)} is an answer provoked here`)
  }
})

// Refusals of what a request says, sent with inject and checked against the spec by send.
async function requestAnswers (t: Test): Promise<unknown[]> {
  const { send, createPlant } = await buildTestApp(t)
  const authorization = `Bearer ${testToken}`
  const answers = [
    await send({ method: 'GET', url: '/plants/10', headers: { authorization } }),
    await createPlant('{"id": 10, "name": }'),
    await createPlant({ id: 10 }),
    await createPlant('{"id": 9223372036854775808, "name": "Fern"}'),
    await send({ method: 'GET', url: '/plants/abc', headers: { authorization } }),
    await createPlant({ id: 10, name: 'Fern' }, { authorization: 'Bearer' }),
    await createPlant({ id: 10, name: 'Fern' }, { authorization: '' }),
    await createPlant({ id: 10, name: 'Fern' }, { authorization: 'Bearer not-a-known-token' }),
    await createPlant('x', { 'content-type': 'text/plain' }),
    await createPlant('{}', { 'content-encoding': 'gzip' }),
    await createPlant({ id: 10, name: 'x'.repeat(16_384) }),
    await send({ method: 'GET', url: '/docs/index.html' }),
    await send({ method: 'GET', url: '/docs/a%00b' }),
    await send({ method: 'GET', url: '/docs/%E0%A4%A' }),
    await send({
      method: 'POST', url: '/webhook-endpoints', headers: { authorization, 'content-type': 'application/json' }, payload: '{"url":"https://10.0.0.7/hook"}',
    }),
    await send({
      method: 'POST',
      url: '/webhook-endpoints',
      headers: { authorization, 'content-type': 'application/json' },
      payload: '{"url":"https://plants.example.com/hook","events":["plantWatered"]}',
    }),
  ]
  await createPlant({ id: 10, name: 'Monstera', tag: 'aroid' })
  answers.push(await createPlant({ id: 10, name: 'Fern' }))
  answers.push(await send({
    method: 'PUT', url: '/plants/10', headers: { authorization, 'content-type': 'application/json', 'if-match': '"a-tag-it-never-had"' }, payload: '{"name":"Fern"}',
  }))
  answers.push(await send({ method: 'DELETE', url: '/plants/10', headers: { authorization, 'if-match': 'a-tag-without-quotes' } }))
  return answers.map(({ body }) => body)
}

async function credentialAnswers (t: Test): Promise<unknown[]> {
  const { app, createPlant } = await buildTestApp(t)
  const expired = await issueManagedToken(app.apiTokens, { name: 'expired', expiresAt: new Date(Date.now() - 1000) })
  const revoked = await issueManagedToken(app.apiTokens, { name: 'revoked' })
  await app.apiTokens.revoke('revoked', new Date())
  const reader = await issueManagedToken(app.apiTokens, { name: 'reader', roles: ['plants:read'] })
  return [
    (await createPlant({ id: 1, name: 'Fern' }, { authorization: `Bearer ${expired.token}` })).body,
    (await createPlant({ id: 1, name: 'Fern' }, { authorization: `Bearer ${revoked.token}` })).body,
    (await createPlant({ id: 1, name: 'Fern' }, { authorization: `Bearer ${reader.token}` })).body,
  ]
}

// Each limit at the setting its example names, with the clock 18 s or 43 s into a window.
async function rateLimitAnswers (t: Test): Promise<unknown[]> {
  let now = 18_000
  const { app, send } = await buildTestApp(t, {
    RATE_LIMIT_WINDOW: 60, RATE_LIMIT_FAILED_AUTH: 30, RATE_LIMIT_PER_CREDENTIAL: 1000, RATE_LIMIT_PER_ADDRESS: 6000,
  }, { rateLimitTuning: { now: () => now } })
  // Only the refusal is checked against the spec: thousands of checks of the answers before it
  // would take seconds.
  const repeat = async (times: number, request: InjectOptions): Promise<unknown> => {
    for (let sent = 1; sent < times; sent++) await app.inject(request)
    return (await send(request)).body
  }
  const failedAuth = await repeat(31, { method: 'GET', url: '/plants/1', headers: { authorization: 'Bearer wrong' }, remoteAddress: '192.0.2.1' })
  now = 43_000
  return [
    failedAuth,
    await repeat(1001, { method: 'GET', url: '/plants/1', headers: { authorization: `Bearer ${testToken}` }, remoteAddress: '192.0.2.2' }),
    await repeat(6001, { method: 'GET', url: '/docs', remoteAddress: '192.0.2.3' }),
  ]
}

// A SQLite store another connection locks (503), then breaks (500).
async function storeAnswers (t: Test): Promise<unknown[]> {
  const filename = `${testFolder(t)}/plants.db`
  const store = await SqlitePlantStore.open({ filename, busyTimeoutMs: 50 })
  const { createPlant } = await buildTestApp(t, {}, { store })
  const other = new Database(filename)
  t.teardown(() => other.close())
  other.exec('BEGIN IMMEDIATE')
  const unavailable = (await createPlant({ id: 1, name: 'Fern' })).body
  other.exec('ROLLBACK')
  other.exec('DROP TABLE plants')
  return [unavailable, (await createPlant({ id: 2, name: 'Fern' })).body]
}

async function identityProviderAnswers (t: Test): Promise<unknown[]> {
  const closed = createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const { port } = closed.address() as AddressInfo
  await new Promise((resolve) => closed.close(resolve))
  const { createPlant } = await buildTestApp(t, {
    JWT_ISSUER: testIssuer, JWT_AUDIENCE: testAudience, JWT_JWKS_URL: `http://127.0.0.1:${port}/jwks.json`, JWT_JWKS_TIMEOUT: 500,
  })
  const jwt = await signJwt(await signingKey('key-1'))
  return [(await createPlant({ id: 1, name: 'Fern' }, { authorization: `Bearer ${jwt}` })).body]
}

// What only a socket can send: no Host, bytes that are not HTTP, header fields over Node's
// limit, and a body that stops arriving.
async function connectionAnswers (t: Test): Promise<unknown[]> {
  const { app } = await buildTestApp(t, { REQUEST_TIMEOUT: 300 })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const exchange = async (method: string, path: string, request: string): Promise<unknown> => {
    const socket = connect(port, '127.0.0.1')
    t.teardown(() => { socket.destroy() })
    let received = ''
    socket.on('data', (chunk: Buffer) => { received += chunk.toString('latin1') })
    socket.write(request)
    // The service closes each of these connections once it has answered; a loaded machine
    // (Chromium in the test beside this one) can take seconds to get there.
    await new Promise((resolve) => { socket.on('close', resolve); setTimeout(resolve, 20_000) })
    t.not(received, '', `an answer to ${JSON.stringify(request.slice(0, 40))} arrived`)
    const [head = '', body = ''] = received.split('\r\n\r\n')
    return assertExchangeMatchesSpec(t, {
      method, url: path, statusCode: Number(head.split(' ')[1]), contentType: /content-type: ([^\r]+)/i.exec(head)?.[1], bodyText: body,
    })
  }
  return Promise.all([
    exchange('GET', '/healthz', 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n'),
    exchange('GET', '/healthz', 'NOT HTTP AT ALL\r\n\r\n'),
    exchange('GET', '/healthz', `GET /healthz HTTP/1.1\r\nHost: plants.test\r\nX-Padding: ${'x'.repeat(20_000)}\r\n\r\n`),
    exchange('POST', '/plants', `POST /plants HTTP/1.1\r\nHost: plants.test\r\nAuthorization: Bearer ${testToken}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 30\r\n\r\n{"id": 1'),
  ])
}
