import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { connect } from 'node:net'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { awaitOutput } from './support/await-output.js'
import { assertExchangeMatchesSpec } from './support/contract.js'
import { freePort } from './support/free-port.js'
import { literalPattern } from './support/literal-pattern.js'
import { startServer } from './support/running-server.js'
import { testFolder } from './support/test-folder.js'

// `npm run mock` is Stoplight Prism serving openapi.yaml alone, behind a front that answers the
// bodies the service would refuse: consumers can build against the contract before any service
// is deployed. Here it runs as that script runs it (`npm test` has built it), on a free port.

const projectRoot = join(import.meta.dirname, '..')
const mockScript = join(projectRoot, 'scripts', 'mock.mjs')
const token = 'any-token-will-do'
// No answer may take longer: the mock once kept a request with a broken body waiting for ever.
const answerTimeoutMs = 10_000

async function startMock (t: Test, port: number, how: { env?: Record<string, string>, args?: string[] }): Promise<string> {
  // Its own process group, so that Prism, its child, is stopped with it whatever happens.
  const child: ChildProcess = spawn(process.execPath, [mockScript, ...how.args ?? []], {
    cwd: projectRoot, env: { ...process.env, ...how.env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
  })
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  t.teardown(() => {
    if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGKILL')
    if (!t.passing()) t.comment(`output of the mock:\n${output}`)
  })
  const baseUrl = `http://127.0.0.1:${port}`
  await awaitOutput(child, () => output, literalPattern(`Mock of openapi.yaml listening on ${baseUrl}\n`), 'the mock to start', 60_000)
  return baseUrl
}

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
  const baseUrl = viaFlag
  t.same(await post(t, baseUrl, '{"id": 1, "name": "Fern"}', { ...withToken, prefer: 'example=withoutTag' }),
    { status: 200, body: { name: 'Fern' } }, 'another example, asked for by name')
  t.same(await post(t, baseUrl, '{"id": 1, "name": "Fern"}', { ...withToken, prefer: 'code=409' }),
    { status: 409, body: { error: 40901, message: 'a plant with id 10 already exists with a different name or tag' } })
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
})
