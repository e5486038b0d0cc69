import { connect } from 'node:net'
import t, { type Test } from 'tap'
import { Database } from '../src/store/sqlite/sqlite-driver.js'
import { buildTestApp, type TestApp, testToken } from './support/helper.js'
import { testOnEveryBackend } from './support/test-databases.js'

// GET /metrics: the Prometheus text of what the service did, with no request data in it, and
// the settings that turn it off (METRICS=off) or protect it (METRICS_TOKEN).

const metricsToken = 'metrics-token-0123456789'

async function scrape (t: Test, { send }: TestApp, headers: Record<string, string> = {}): Promise<string> {
  const answer = await send({ method: 'GET', url: '/metrics', headers })
  t.equal(answer.statusCode, 200, 'the metrics are served')
  t.equal(answer.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8')
  return answer.body as string
}

// The value of one series, as its line in the text writes it; undefined when there is no such line.
function valueOf (text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

function familiesOf (text: string): Set<string> {
  return new Set(text.split('\n').filter((line) => line.startsWith('# TYPE ')).map((line) => line.split(' ')[2] ?? ''))
}

testOnEveryBackend(t, 'requests, their latency and the store\'s batches are counted by operation, status and backend', async (t, database) => {
  const testApp = await buildTestApp(t, { DATABASE_URL: database.url })
  const { createPlant, send } = testApp
  t.equal((await createPlant({ id: 7, name: 'Secret Orchid', tag: 'hidden-tag' })).statusCode, 200)
  t.equal((await createPlant({ id: 8 })).statusCode, 400, 'a body without a name is refused')
  t.equal((await send({ method: 'GET', url: '/plants/7', headers: { authorization: 'Bearer not-a-known-token' } })).statusCode, 401)
  t.equal((await send({ method: 'GET', url: '/no/such/path/12345' })).statusCode, 404)
  const asCaller = { authorization: `Bearer ${testToken}` }
  t.equal((await send({ method: 'GET', url: '/plants?limit=5', headers: asCaller })).statusCode, 200)
  t.equal((await send({ method: 'DELETE', url: '/plants/8', headers: asCaller })).statusCode, 404)

  const text = await scrape(t, testApp)
  t.equal(valueOf(text, 'plant_store_http_requests_total{operation="listPlants",status="200"}'), 1, 'each operation by its operationId')
  t.equal(valueOf(text, 'plant_store_http_requests_total{operation="deletePlant",status="404"}'), 1)
  t.equal(valueOf(text, 'plant_store_http_requests_total{operation="createPlant",status="200"}'), 1)
  t.equal(valueOf(text, 'plant_store_http_requests_total{operation="createPlant",status="400"}'), 1)
  t.equal(valueOf(text, 'plant_store_http_requests_total{operation="getPlant",status="401"}'), 1)
  t.equal(valueOf(text, 'plant_store_http_requests_total{operation="unrouted",status="404"}'), 1, 'an unknown path is counted as unrouted')
  t.equal(valueOf(text, 'plant_store_http_request_duration_seconds_count{operation="createPlant"}'), 2)
  t.equal(valueOf(text, 'plant_store_http_request_duration_seconds_bucket{le="+Inf",operation="createPlant"}'), 2)
  t.ok((valueOf(text, 'plant_store_http_request_duration_seconds_sum{operation="createPlant"}') ?? 0) > 0, 'the latency is measured')

  const backend = database.backend === 'SQLite' ? 'sqlite' : 'postgres'
  t.equal(valueOf(text, `plant_store_store_batch_size_count{backend="${backend}"}`), 2, 'two batches were committed')
  t.equal(valueOf(text, `plant_store_store_batch_size_sum{backend="${backend}"}`), 2, 'holding the one create, then the one delete')
  t.equal(valueOf(text, `plant_store_store_commit_duration_seconds_count{backend="${backend}"}`), 2)
  t.equal(valueOf(text, 'plant_store_store_errors_total{kind="unavailable"}'), 0, 'store errors are counted from zero')
  t.equal(valueOf(text, 'plant_store_rate_limit_refusals_total{policy="per-address"}'), 0, 'refusals are counted from zero')
  t.ok(valueOf(text, 'process_cpu_user_seconds_total') !== undefined, 'the process metrics are there')
  t.ok(valueOf(text, 'nodejs_eventloop_lag_seconds') !== undefined)

  // Looked for in the metrics' names, labels and help, not in their values: a sum of seconds or
  // bytes may hold the digits 12345 by chance.
  const withoutValues = text.split('\n').map((line) => line.startsWith('#') ? line : line.replace(/ \S+$/, '')).join('\n')
  for (const leak of ['Secret Orchid', 'hidden-tag', '/plants/7', '/plants/8', 'limit=5', '12345', testToken, 'not-a-known-token', '127.0.0.1']) {
    t.notOk(withoutValues.includes(leak), `no request data in the metrics: ${leak}`)
  }

  const again = await scrape(t, testApp)
  t.equal(valueOf(again, 'plant_store_http_requests_total{operation="getMetrics",status="200"}'), 1, 'scrapes are counted too')
})

t.test('every refusal of a rate limit is counted by its policy', async (t) => {
  const testApp = await buildTestApp(t, {
    RATE_LIMIT_PER_CREDENTIAL: 1, RATE_LIMIT_PER_ADDRESS: 1, RATE_LIMIT_FAILED_AUTH: 1,
  }, { rateLimitTuning: { now: () => 0 } })
  const { createPlant, send } = testApp
  t.equal((await createPlant({ id: 1, name: 'Fern' })).statusCode, 200)
  t.equal((await createPlant({ id: 2, name: 'Fern' })).statusCode, 429, 'over the credential\'s limit')
  const fromAddress = { method: 'GET', url: '/openapi.json', remoteAddress: '203.0.113.5' } as const
  t.equal((await send(fromAddress)).statusCode, 200)
  t.equal((await send(fromAddress)).statusCode, 429, 'over the address\'s limit')
  const guess = { method: 'GET', url: '/plants/1', remoteAddress: '203.0.113.6', headers: { authorization: 'Bearer guess' } } as const
  t.equal((await send(guess)).statusCode, 401)
  t.equal((await send(guess)).statusCode, 429, 'over the failed authentications\' limit')

  // The scrape is counted per credential like the plant operations: from an address of its own.
  const text = (await send({ method: 'GET', url: '/metrics', remoteAddress: '198.51.100.1' })).body as string
  t.equal(valueOf(text, 'plant_store_rate_limit_refusals_total{policy="per-credential"}'), 1)
  t.equal(valueOf(text, 'plant_store_rate_limit_refusals_total{policy="per-address"}'), 1)
  t.equal(valueOf(text, 'plant_store_rate_limit_refusals_total{policy="failed-auth"}'), 1)
  t.equal(valueOf(text, 'plant_store_http_requests_total{operation="getOpenApiJson",status="429"}'), 1)
})

t.test('store errors are counted by kind: unavailable (503) and unexpected (500)', async (t) => {
  const testApp = await buildTestApp(t)
  const { createPlant, databaseFile } = testApp
  const other = new Database(databaseFile)
  t.teardown(() => other.close())
  other.exec('BEGIN IMMEDIATE')
  t.equal((await createPlant({ id: 1, name: 'Fern' })).statusCode, 503, 'a store locked by another writer is unavailable')
  other.exec('ROLLBACK')
  other.exec('DROP TABLE plants')
  t.equal((await createPlant({ id: 2, name: 'Fern' })).statusCode, 500, 'a store without its table fails unexpectedly')

  const text = await scrape(t, testApp)
  t.equal(valueOf(text, 'plant_store_store_errors_total{kind="unavailable"}'), 1)
  t.equal(valueOf(text, 'plant_store_store_errors_total{kind="unexpected"}'), 1)
  t.equal(valueOf(text, 'plant_store_store_commit_duration_seconds_count{backend="sqlite"}'), 2, 'failed batches are timed too')
  t.same([...familiesOf(text)].filter((family) => family.startsWith('plant_store_')).sort(), [
    'plant_store_http_request_duration_seconds',
    'plant_store_http_requests_total',
    'plant_store_rate_limit_refusals_total',
    'plant_store_store_batch_size',
    'plant_store_store_commit_duration_seconds',
    'plant_store_store_errors_total',
    'plant_store_webhook_deliveries_total',
    'plant_store_webhook_delivery_delay_seconds',
    'plant_store_webhook_messages_pending',
  ], 'every family of the service is there')
})

t.test('METRICS=off: nothing is measured, and /metrics answers 404 as an unknown path does', async (t) => {
  const { send } = await buildTestApp(t, { METRICS: 'off' })
  const answer = await send({ method: 'GET', url: '/metrics' })
  t.equal(answer.statusCode, 404)
  t.same(answer.body, { error: 40401, message: 'no route for GET /metrics' })
})

t.test('METRICS_TOKEN: /metrics needs it as a bearer token', async (t) => {
  const testApp = await buildTestApp(t, { METRICS_TOKEN: metricsToken })
  const { send } = testApp
  const missing = await send({ method: 'GET', url: '/metrics' })
  t.equal(missing.statusCode, 401)
  t.same(missing.body, { error: 40101, message: 'bearer credentials are required' })
  t.equal(missing.headers['www-authenticate'], 'Bearer realm="plant-store"')

  const wrong = await send({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${metricsToken}x` } })
  t.equal(wrong.statusCode, 401)
  t.equal(wrong.headers['www-authenticate'], 'Bearer realm="plant-store", error="invalid_token"')
  const apiToken = await send({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${testToken}` } })
  t.equal(apiToken.statusCode, 401, 'a token of API_TOKENS is not the metrics token')
  t.equal((await send({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer' } })).statusCode, 400, 'a malformed header is a 400')

  const text = await scrape(t, testApp, { authorization: `Bearer ${metricsToken}` })
  t.notOk(text.includes(metricsToken), 'the token is not in the metrics')
  t.equal(valueOf(text, 'plant_store_http_requests_total{operation="getMetrics",status="401"}'), 3)
  const metricsToken401 = await send({ method: 'GET', url: '/plants/1', headers: { authorization: `Bearer ${metricsToken}` } })
  t.equal(metricsToken401.statusCode, 401, 'the metrics token opens nothing else')
})

t.test('METRICS_TOKEN: wrong guesses are failed authentications, counted with the plant operations\' against the address', async (t) => {
  const { send } = await buildTestApp(t, { METRICS_TOKEN: metricsToken, RATE_LIMIT_FAILED_AUTH: 3 })
  const scrape = (token: string, remoteAddress: string) =>
    send({ method: 'GET', url: '/metrics', remoteAddress, headers: { authorization: `Bearer ${token}` } })
  const guesser = '203.0.113.7'
  t.equal((await scrape('wrong-guess-1', guesser)).statusCode, 401)
  t.equal((await scrape('wrong-guess-2', guesser)).statusCode, 401)
  const plantGuess = await send({ method: 'GET', url: '/plants/1', remoteAddress: guesser, headers: { authorization: 'Bearer wrong-guess-3' } })
  t.equal(plantGuess.statusCode, 401, 'a guess at a plant operation counts against the same address')

  const refused = await scrape(metricsToken, guesser)
  t.equal(refused.statusCode, 429, 'past the limit, the right token is refused too')
  t.same(refused.body, { error: 42903, message: 'too many failed authentications from this address (its limit is 3 per 60 seconds); retry after 30 seconds' })
  t.equal(refused.headers['ratelimit-policy'], '"failed-auth";q=3;w=60')
  const plantRefused = await send({ method: 'GET', url: '/plants/1', remoteAddress: guesser, headers: { authorization: `Bearer ${testToken}` } })
  t.equal((plantRefused.body as { error: number }).error, 42903, 'and so are its plant requests')

  const other = await scrape(metricsToken, '203.0.113.8')
  t.equal(other.statusCode, 200, 'another address is not affected')
})

t.test('requests Node answers before they reach a route (malformed HTTP) are counted as "unparsed"', async (t) => {
  const testApp = await buildTestApp(t)
  const address = await testApp.app.listen({ port: 0, host: '127.0.0.1' })
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(new URL(address).port), '127.0.0.1', () => socket.end('NOT HTTP AT ALL\r\n\r\n'))
    let received = ''
    socket.on('data', (chunk: Buffer) => { received += chunk.toString() })
    socket.on('close', () => resolve(received))
    socket.on('error', reject)
  })
  t.match(answer, /^HTTP\/1\.1 400 /)
  const text = await scrape(t, testApp)
  t.equal(valueOf(text, 'plant_store_http_requests_total{operation="unparsed",status="400"}'), 1)
})
