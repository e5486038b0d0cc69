import type { AddressInfo } from 'node:net'
import { connect } from 'node:net'
import type { InjectOptions } from 'fastify'
import t from 'tap'
import { ConfigSchema, loadConfig } from '../src/config/config.js'
import { unlimitedOperations } from '../src/rate-limit/rate-limits.js'
import { listOperations, loadOpenApiDocument } from '../src/openapi/openapi-document.js'
import { buildTestApp, testToken } from './support/helper.js'
import { readStoredIds } from './support/stored-plants.js'

// What a 429 says and when: its headers, the window's end, a body never read, the spec's
// declarations, and the documented defaults against a guessing loop.

const guesser = '203.0.113.66'
const badGuess = (id: number): InjectOptions => ({
  method: 'POST',
  url: '/plants',
  remoteAddress: guesser,
  headers: { authorization: `Bearer guess-${id}`, 'content-type': 'application/json' },
  payload: JSON.stringify({ id, name: 'Fern' }),
})

t.test('a 429 carries Retry-After, RateLimit and RateLimit-Policy, to the second the window ends', async (t) => {
  const clock = { now: 18_000 }
  const { send } = await buildTestApp(t, { RATE_LIMIT_FAILED_AUTH: 2, RATE_LIMIT_PER_CREDENTIAL: 1, RATE_LIMIT_PER_ADDRESS: 1 },
    { rateLimitTuning: { now: () => clock.now } })
  await send(badGuess(1))
  await send(badGuess(2))
  const failedAuth = await send(badGuess(3))
  t.equal(failedAuth.headers['retry-after'], '42', 'the window of 60 s ends 42 s after 18 s')
  t.equal(failedAuth.headers.ratelimit, '"failed-auth";r=0;t=42')
  t.equal(failedAuth.headers['ratelimit-policy'], '"failed-auth";q=2;w=60')
  t.same(failedAuth.body, {
    error: 42903,
    message: 'too many failed authentications from this address (its limit is 2 per 60 seconds); retry after 42 seconds',
  })

  clock.now = 58_500
  const token = { authorization: `Bearer ${testToken}` }
  await send({ method: 'GET', url: '/plants/1', headers: token })
  const perCredential = await send({ method: 'GET', url: '/plants/1', headers: token })
  t.equal(perCredential.headers['retry-after'], '2', '1.5 s left is 2 whole seconds')
  t.equal(perCredential.headers.ratelimit, '"per-credential";r=0;t=2')
  t.equal(perCredential.headers['ratelimit-policy'], '"per-credential";q=1;w=60')
  t.same(perCredential.body, {
    error: 42901, message: 'too many requests for this credential (its limit is 1 per 60 seconds); retry after 2 seconds',
  })

  clock.now = 59_999
  await send({ method: 'GET', url: '/openapi.json' })
  const perAddress = await send({ method: 'GET', url: '/openapi.json' })
  t.equal(perAddress.headers['retry-after'], '1', 'never 0, even 1 ms before the end')
  t.equal(perAddress.headers.ratelimit, '"per-address";r=0;t=1')
  t.equal(perAddress.headers['ratelimit-policy'], '"per-address";q=1;w=60')
  t.same(perAddress.body, {
    error: 42902, message: 'too many requests from this address (its limit is 1 per 60 seconds); retry after 1 second',
  })
})

t.test('every limit is lifted when its window ends, and not before', async (t) => {
  const clock = { now: 1_000_000 }
  const { send } = await buildTestApp(t, { RATE_LIMIT_WINDOW: 10, RATE_LIMIT_FAILED_AUTH: 1, RATE_LIMIT_PER_ADDRESS: 1 },
    { rateLimitTuning: { now: () => clock.now } })
  const create = { ...badGuess(1), headers: { authorization: `Bearer ${testToken}`, 'content-type': 'application/json' } }
  await send(badGuess(2))
  await send({ method: 'GET', url: '/docs', remoteAddress: guesser })
  t.equal((await send(create)).statusCode, 429)
  t.equal((await send({ method: 'GET', url: '/docs', remoteAddress: guesser })).statusCode, 429)
  clock.now = 1_009_999
  t.equal((await send(create)).statusCode, 429, 'still refused 1 ms before the window ends')
  clock.now = 1_010_000
  t.equal((await send(create)).statusCode, 200, 'served once it ends')
  t.equal((await send({ method: 'GET', url: '/docs', remoteAddress: guesser })).statusCode, 200)
})

t.test('a refused request\'s body is never read: not parsed, not stored, not invited', async (t) => {
  const { app, send, databaseFile } = await buildTestApp(t, { RATE_LIMIT_PER_CREDENTIAL: 1 })
  const token = `Bearer ${testToken}`
  const headers = { authorization: token, 'content-type': 'application/json' }
  t.equal((await send({ method: 'POST', url: '/plants', headers, payload: '{"id": 1, "name": "Fern"}' })).statusCode, 200)
  const unparsable = await send({ method: 'POST', url: '/plants', headers, payload: '{"id": 2, "na' })
  t.equal(unparsable.statusCode, 429, 'a 429, not the 400 its broken JSON would get')

  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const body = JSON.stringify({ id: 3, name: 'Fern' })
  const exchange = async (head: string, partOfBody: string): Promise<string> => {
    const socket = connect(port, '127.0.0.1')
    t.teardown(() => { socket.destroy() })
    let received = ''
    socket.on('data', (chunk: Buffer) => { received += chunk.toString('latin1') })
    socket.write(head + partOfBody)
    await new Promise((resolve) => { socket.on('close', resolve); setTimeout(resolve, 3000) })
    return received
  }
  const head = (...extraHeaders: string[]): string => ['POST /plants HTTP/1.1', 'Host: plants.test', `Authorization: ${token}`,
    'Content-Type: application/json', `Content-Length: ${body.length}`, ...extraHeaders, '', ''].join('\r\n')

  const expecting = await exchange(head('Expect: 100-continue'), '')
  t.notMatch(expecting, /100 Continue/, 'no 100 Continue: the body is never invited')
  t.match(expecting, /^HTTP\/1\.1 429 Too Many Requests\r\n/)
  t.match(expecting, /\r\nconnection: close\r\n/i, 'and the connection is closed')
  const started = Date.now()
  const stalled = await exchange(head(), body.slice(0, 5))
  t.match(stalled, /^HTTP\/1\.1 429 /, 'a body that never completes is answered at once')
  t.ok(Date.now() - started < 2000, 'without waiting for it')
  t.same(readStoredIds(databaseFile), [1n], 'only the create before the limit is stored')
})

t.test('every operation the service limits declares 429 in openapi.yaml, and only those', async (t) => {
  const { document } = loadOpenApiDocument()
  const concrete = (path: string): string => path.replace('{id}', '1').replace('{asset}', 'swagger-ui.css')
  for (const { path, method, operation } of listOperations(document)) {
    const { send } = await buildTestApp(t, { RATE_LIMIT_PER_CREDENTIAL: 1, RATE_LIMIT_PER_ADDRESS: 1 })
    const request: InjectOptions = {
      method: method.toUpperCase() as 'GET',
      url: concrete(path),
      headers: { authorization: `Bearer ${testToken}`, 'content-type': 'application/json' },
      ...(method === 'post' ? { payload: JSON.stringify({ id: 1, name: 'Fern' }) } : {}),
    }
    await send(request)
    const second = await send(request)
    const declares429 = Object.hasOwn((operation as { responses: object }).responses, '429')
    t.equal(second.statusCode === 429, declares429, `${operation.operationId}: ${declares429 ? 'limited' : 'not limited'}, as declared`)
    t.equal(declares429, !unlimitedOperations.has(String(operation.operationId)), `${operation.operationId}: exempt only if a probe`)
  }
})

t.test('with the documented defaults, a guessing loop gets 30 401s and then only 429s', async (t) => {
  const defaults = loadConfig({})
  t.same([defaults.RATE_LIMIT_WINDOW, defaults.RATE_LIMIT_FAILED_AUTH], [60, 30], 'the README\'s defaults')
  t.equal(ConfigSchema.properties.RATE_LIMIT_FAILED_AUTH.default, 30)
  const { app } = await buildTestApp(t, {
    RATE_LIMIT_WINDOW: defaults.RATE_LIMIT_WINDOW,
    RATE_LIMIT_PER_CREDENTIAL: defaults.RATE_LIMIT_PER_CREDENTIAL,
    RATE_LIMIT_PER_ADDRESS: defaults.RATE_LIMIT_PER_ADDRESS,
    RATE_LIMIT_FAILED_AUTH: defaults.RATE_LIMIT_FAILED_AUTH,
  }, { rateLimitTuning: { now: () => 0 } })
  const statuses = new Map<number, number>()
  for (let guess = 0; guess < 2000; guess++) {
    const { statusCode } = await app.inject(badGuess(guess))
    statuses.set(statusCode, (statuses.get(statusCode) ?? 0) + 1)
  }
  t.same(Object.fromEntries(statuses), { 401: 30, 429: 1970 })
})
