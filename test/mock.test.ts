import { once } from 'node:events'
import { connect } from 'node:net'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { assertExchangeMatchesSpec } from './support/contract.js'
import { freePort } from './support/free-port.js'
import { startMock } from './support/running-mock.js'
import { startServer } from './support/running-server.js'
import { testFolder } from './support/test-folder.js'

// `npm run mock` is Stoplight Prism serving openapi.yaml alone, behind a front that answers what
// the service would refuse (credentials, paths, queries, headers, bodies) with the service's own
// code, and serves the spec as the service does: consumers can build against the contract before
// any service is deployed. Here it runs as that script runs it (`npm test` has built it), on a
// free port; test/conformance-check.test.ts runs the conformance check against it.

const token = 'any-token-will-do'
// No answer may take longer: the mock once kept a request with a broken body waiting for ever.
const answerTimeoutMs = 10_000

async function post (t: Test, baseUrl: string, bodyText: string, headers: Record<string, string>): Promise<{ status: number, body: unknown }> {
  const response = await fetch(`${baseUrl}/plants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: bodyText,
    signal: AbortSignal.timeout(answerTimeoutMs),
  })
  const responseText = await response.text()
  assertExchangeMatchesSpec(t, {
    method: 'POST', url: '/plants', statusCode: response.status, contentType: response.headers.get('content-type') ?? undefined, bodyText: responseText,
  })
  return { status: response.status, body: JSON.parse(responseText) }
}

const withToken = { authorization: `Bearer ${token}` }

interface Exchange {
  readonly method: string
  readonly path: string
  readonly headers?: Record<string, string>
}

// What a client sees of an answer: its status, the headers the spec declares or the service
// always sends (the request id is asked for, so that both give the same), and its body.
async function answerOf (t: Test, baseUrl: string, { method, path, headers = {} }: Exchange): Promise<{ status: number, headers: Record<string, string | null>, body: unknown }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method, headers: { 'x-request-id': 'mock-test', ...headers }, signal: AbortSignal.timeout(answerTimeoutMs),
  })
  const bodyText = await response.text()
  assertExchangeMatchesSpec(t, {
    method, url: path, statusCode: response.status, contentType: response.headers.get('content-type') ?? undefined, bodyText,
  })
  const shown = ['allow', 'content-type', 'www-authenticate', 'x-content-type-options', 'x-request-id']
  return {
    status: response.status,
    headers: Object.fromEntries(shown.map((name) => [name, response.headers.get(name)])),
    body: JSON.parse(bodyText),
  }
}

// Requests the service refuses before any handler, each for a reason of its own.
const refusedRequests: Record<string, Exchange> = {
  'no token': { method: 'GET', path: '/plants/abc' },
  'a malformed Authorization header': { method: 'GET', path: '/plants', headers: { authorization: 'Bearer two tokens' } },
  'an id that is not an integer': { method: 'GET', path: '/plants/abc', headers: withToken },
  'a limit below its minimum': { method: 'GET', path: '/plants?limit=0', headers: withToken },
  'a limit sent twice': { method: 'GET', path: '/plants?limit=1&limit=2', headers: withToken },
  'a path no operation declares': { method: 'GET', path: '/plantz', headers: withToken },
  'a method the path does not declare': { method: 'PATCH', path: '/plants', headers: withToken },
}
// Bodies the service refuses, each for a reason of its own; the mock must give the same answers.
const refusedBodies = {
  'broken JSON': '{"id": 1, "name": "Fern"',
  'a string id': '{"id": "1", "name": "Fern"}',
  'an id beyond int64': '{"id": 9223372036854775808, "name": "Fern"}',
  'no name': '{"id": 1}',
}

t.test('MOCK_PORT and --port choose the port; the mock answers every request as the spec says', async (t) => {
  const environmentPort = await freePort()
  const viaEnvironment = await startMock(t, environmentPort, { env: { MOCK_PORT: String(environmentPort) } })
  // The flag wins over the environment.
  const flagPort = await freePort()
  const viaFlag = await startMock(t, flagPort, { env: { MOCK_PORT: String(environmentPort) }, args: ['--port', String(flagPort)] })

  for (const baseUrl of [viaEnvironment, viaFlag]) {
    t.same(await post(t, baseUrl, '{"id": 1, "name": "Fern"}', withToken), { status: 200, body: { name: 'Monstera', tag: 'aroid' } },
      'a valid create: the first 200 example')
    t.same(await post(t, baseUrl, '{"id": 1, "name": "Fern"}', {}),
      { status: 401, body: { error: 40101, message: 'bearer credentials are required' } }, 'no token')
  }
  const refused = await fetch(`${viaFlag}/plants`, { signal: AbortSignal.timeout(answerTimeoutMs) })
  t.same([refused.status, refused.headers.get('www-authenticate'), refused.headers.get('x-content-type-options')],
    [401, 'Bearer realm="plant-store"', 'nosniff'], 'a refusal has the service\'s challenge and common headers')
  const baseUrl = viaFlag
  t.same(await post(t, baseUrl, '{"id": 1, "name": "Fern"}', { ...withToken, prefer: 'example=withoutTag' }),
    { status: 200, body: { name: 'Fern' } }, 'another example, asked for by name')
  t.same(await post(t, baseUrl, '{"id": 1, "name": "Fern"}', { ...withToken, prefer: 'code=409' }),
    { status: 409, body: { error: 40901, message: 'a plant with id 10 already exists with a different name or tag' } })
  const conflict = await fetch(`${baseUrl}/plants?__code=409`, {
    method: 'POST', headers: { ...withToken, 'content-type': 'application/json' }, body: '{"id": 1, "name": "Fern"}', signal: AbortSignal.timeout(answerTimeoutMs),
  })
  t.equal(conflict.status, 409, 'Prism\'s __code query parameter picks an answer too')
  await conflict.body?.cancel()
  const beyondDoubles = await fetch(`${baseUrl}/plants/9223372036854775806`, { headers: withToken, signal: AbortSignal.timeout(answerTimeoutMs) })
  t.same([beyondDoubles.status, await beyondDoubles.json()], [200, { name: 'Monstera', tag: 'aroid' }],
    'an id the service accepts beyond 2^53 is answered, not refused as Prism would')
  t.same(await post(t, baseUrl, refusedBodies['broken JSON'], withToken), {
    status: 400, body: { error: 40001, message: 'invalid JSON at character 24: expected "," or "}", found the end of the body' },
  }, 'broken JSON is answered, at once')
  t.same(await post(t, baseUrl, refusedBodies['a string id'], withToken),
    { status: 400, body: { error: 40003, message: 'body.id must be integer' } }, 'a string id')

  const listed = await fetch(`${baseUrl}/plants?limit=2`, { headers: withToken, signal: AbortSignal.timeout(answerTimeoutMs) })
  const listedText = await listed.text()
  assertExchangeMatchesSpec(t, {
    method: 'GET',
    url: '/plants?limit=2',
    statusCode: listed.status,
    contentType: listed.headers.get('content-type') ?? undefined,
    bodyText: listedText,
    headers: Object.fromEntries(listed.headers),
  })
  t.same([listed.status, JSON.parse(listedText), listed.headers.get('link')],
    [200, [{ id: 10, name: 'Monstera', tag: 'aroid' }, { id: 11, name: 'Fern' }], '</plants?after=11&limit=2>; rel="next"'],
    'a page of the list, with its next page\'s Link')
  const deleted = await fetch(`${baseUrl}/plants/10`, { method: 'DELETE', headers: withToken, signal: AbortSignal.timeout(answerTimeoutMs) })
  t.same([deleted.status, await deleted.text()], [204, ''], 'a delete: 204, no body')
  // An operation that declares no body reads none, as the service: a stray one, over the body
  // limit and of a media type no operation reads, is discarded.
  const strayBody = { 'content-type': 'text/plain', 'content-encoding': 'gzip' }
  const deletedWithBody = await fetch(`${baseUrl}/plants/10`, {
    method: 'DELETE', headers: { ...withToken, ...strayBody }, body: 'x'.repeat(20_000), signal: AbortSignal.timeout(answerTimeoutMs),
  })
  t.same([deletedWithBody.status, await deletedWithBody.text()], [204, ''], 'a delete with a stray body: 204, as without')
  // A target Node parses and URL does not is answered, and the mock lives on.
  const { port } = new URL(baseUrl)
  const socket = connect(Number(port), '127.0.0.1')
  socket.end('GET //[ HTTP/1.1\r\nHost: mock\r\n\r\n')
  socket.resume()
  await once(socket, 'close')
  t.equal((await post(t, baseUrl, '{"id": 1, "name": "Fern"}', withToken)).status, 200, 'still answering after a target URL cannot parse')

  const service = await startServer(t, { DATABASE_URL: `sqlite:${join(testFolder(t), 'plants.db')}`, API_TOKENS: token })
  for (const [what, bodyText] of Object.entries(refusedBodies)) {
    t.same(await post(t, baseUrl, bodyText, withToken), await post(t, service.baseUrl, bodyText, withToken),
      `${what}: the mock answers what the service answers`)
  }
  for (const [what, request] of Object.entries(refusedRequests)) {
    t.same(await answerOf(t, baseUrl, request), await answerOf(t, service.baseUrl, request),
      `${what}: the mock answers what the service answers, status, headers and body`)
  }
})

t.test('with --token, the mock accepts only the tokens given, and refuses any other as the service does', async (t) => {
  const port = await freePort()
  const baseUrl = await startMock(t, port, { args: ['--port', String(port), '--token', token] })
  const service = await startServer(t, { DATABASE_URL: `sqlite:${join(testFolder(t), 'plants.db')}`, API_TOKENS: token })
  const unknownToken: Exchange = { method: 'GET', path: '/plants', headers: { authorization: 'Bearer another-token' } }
  t.same(await answerOf(t, baseUrl, unknownToken), await answerOf(t, service.baseUrl, unknownToken), 'an unknown token: 401 invalid_token')
  t.equal((await answerOf(t, baseUrl, { method: 'GET', path: '/plants', headers: withToken })).status, 200, 'the token given')
})
