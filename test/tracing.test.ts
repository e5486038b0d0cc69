import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gunzipSync } from 'node:zlib'
import t, { type Test } from 'tap'
import { Database } from '../src/store/sqlite/sqlite-driver.js'
import { buildTestApp, testToken } from './support/helper.js'
import { testOnEveryBackend } from './support/test-databases.js'

// With an OTLP endpoint set, every request is traced: a span named after its operation, a child
// span for its authentication and one for its handler, and a span per committed batch of creates,
// linked both ways to the handlers of its requests. The spans are received here as an OpenTelemetry
// collector would receive them: OTLP/HTTP, JSON, on /v1/traces.

interface AttributeValue { stringValue?: string, intValue?: string | number, boolValue?: boolean }
interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  attributes?: Array<{ key: string, value: AttributeValue }>
  links?: Array<{ traceId: string, spanId: string }>
  status?: { code?: number, message?: string }
}
interface ExportRequest {
  resourceSpans: Array<{
    resource: { attributes: Array<{ key: string, value: AttributeValue }> }
    scopeSpans: Array<{ spans: ReceivedSpan[] }>
  }>
}

const statusError = 2

async function readBody (request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  const body = Buffer.concat(chunks)
  return request.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body
}

// A collector on a free port of the loopback address; it keeps every export it accepts.
async function startCollector (t: Test): Promise<{ endpoint: string, exports: ExportRequest[] }> {
  const exports: ExportRequest[] = []
  const server = createServer((request, response) => {
    void readBody(request).then((body) => {
      if (request.method !== 'POST' || request.url !== '/v1/traces' || !String(request.headers['content-type']).startsWith('application/json')) {
        response.writeHead(404).end()
        return
      }
      exports.push(JSON.parse(body.toString('utf8')) as ExportRequest)
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, exports }
}

function attributeOf (span: ReceivedSpan, key: string): string | number | boolean | undefined {
  const value = span.attributes?.find((attribute) => attribute.key === key)?.value
  if (value?.intValue !== undefined) return Number(value.intValue)
  return value?.stringValue ?? value?.boolValue
}

function spansOf (exports: ExportRequest[]): ReceivedSpan[] {
  return exports.flatMap((exported) => exported.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans)))
}

function only (t: Test, spans: ReceivedSpan[], description: string): ReceivedSpan {
  t.equal(spans.length, 1, `one span: ${description}`)
  return spans[0] ?? { traceId: '', spanId: '', name: '' }
}

testOnEveryBackend(t, 'a create, a refused token and an invalid body, traced', async (t, database) => {
  const { endpoint, exports } = await startCollector(t)
  const { app, createPlant, send } = await buildTestApp(t, { DATABASE_URL: database.url, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })
  t.equal((await createPlant({ id: 1, name: 'Fern' })).statusCode, 200)
  t.equal((await send({ method: 'GET', url: '/plants/1', headers: { authorization: 'Bearer not-a-known-token' } })).statusCode, 401)
  t.equal((await createPlant({ id: 2 })).statusCode, 400)
  t.equal((await send({ method: 'GET', url: '/no/such/path' })).statusCode, 404)
  // Closing the app flushes the spans still buffered.
  await app.close()

  t.ok(exports.length > 0, 'the spans were sent')
  const serviceName = exports[0]?.resourceSpans[0]?.resource.attributes.find(({ key }) => key === 'service.name')?.value.stringValue
  t.equal(serviceName, 'plant-store', 'the service is named plant-store by default')
  const spans = spansOf(exports)
  const byParent = (parent: ReceivedSpan): ReceivedSpan[] => spans.filter((span) => span.parentSpanId === parent.spanId)

  const [created, invalid, ...otherCreates] = spans.filter((span) => span.name === 'createPlant')
  t.equal(otherCreates.length, 0, 'two createPlant requests')
  if (created === undefined || invalid === undefined) return
  t.equal(attributeOf(created, 'plant_store.operation_id'), 'createPlant')
  t.equal(attributeOf(created, 'http.response.status_code'), 200)
  t.notOk(created.parentSpanId, 'the request span is a root')
  t.not(created.status?.code, statusError)

  const createdAuthentication = only(t, byParent(created).filter((span) => span.name === 'authenticate'), 'the create\'s authentication')
  t.equal(attributeOf(createdAuthentication, 'plant_store.security_scheme'), 'bearerAuth')
  t.not(createdAuthentication.status?.code, statusError)
  const handler = only(t, byParent(created).filter((span) => span.name.startsWith('handler')), 'the create\'s handler')
  t.equal(handler.traceId, created.traceId)

  const batch = only(t, spans.filter((span) => span.name === 'commit batch'), 'the batch that committed the create')
  t.notOk(batch.parentSpanId, 'a batch belongs to no one request: it is a root')
  t.equal(attributeOf(batch, 'plant_store.batch.size'), 1)
  t.equal(attributeOf(batch, 'plant_store.store.backend'), database.backend === 'SQLite' ? 'sqlite' : 'postgres')
  t.same(batch.links?.map(({ traceId, spanId }) => ({ traceId, spanId })), [{ traceId: handler.traceId, spanId: handler.spanId }],
    'the batch links to the handler of the create it committed')
  t.same(handler.links?.map(({ traceId, spanId }) => ({ traceId, spanId })), [{ traceId: batch.traceId, spanId: batch.spanId }],
    'and the handler links to the batch')

  const refused = only(t, spans.filter((span) => span.name === 'getPlant'), 'the request with an unknown token')
  t.equal(refused.status?.code, statusError, 'a refused request is marked failed')
  t.equal(attributeOf(refused, 'http.response.status_code'), 401)
  const refusal = only(t, byParent(refused).filter((span) => span.name === 'authenticate'), 'its authentication')
  t.equal(refusal.status?.code, statusError, 'the authentication span says it failed')
  t.equal(refusal.status?.message, 'the bearer token is not valid')
  t.equal(byParent(refused).filter((span) => span.name.startsWith('handler')).length, 0, 'no handler ran')

  t.equal(invalid.status?.code, statusError, 'an invalid body is marked failed')
  t.equal(attributeOf(invalid, 'http.response.status_code'), 400)
  t.equal(byParent(invalid).filter((span) => span.name.startsWith('handler')).length, 0, 'no handler ran')

  const unrouted = only(t, spans.filter((span) => span.name === 'unrouted'), 'the unknown path')
  t.equal(unrouted.status?.code, statusError)
  t.equal(attributeOf(unrouted, 'http.response.status_code'), 404)

  for (const span of spans) {
    t.notOk(JSON.stringify(span).includes(testToken), `no token in ${span.name}`)
  }
})

t.test('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used as it is, and OTEL_SERVICE_NAME names the service', async (t) => {
  const { endpoint, exports } = await startCollector(t)
  const { app, send } = await buildTestApp(t, {
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/not-this-one',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${endpoint}/v1/traces`,
    OTEL_SERVICE_NAME: 'plants-eu-1',
  })
  t.equal((await send({ method: 'GET', url: '/healthz' })).statusCode, 200)
  await app.close()
  t.ok(spansOf(exports).some((span) => span.name === 'getHealth'), 'the request was traced')
  t.equal(exports[0]?.resourceSpans[0]?.resource.attributes.find(({ key }) => key === 'service.name')?.value.stringValue, 'plants-eu-1')
})

t.test('without an OTLP endpoint nothing of OpenTelemetry is registered', async (t) => {
  const { app, send } = await buildTestApp(t)
  t.equal((await send({ method: 'GET', url: '/healthz' })).statusCode, 200)
  t.notOk(app.hasPlugin('@fastify/otel'))
  t.notOk(app.hasRequestDecorator('opentelemetry'))
})

t.test('with one, @fastify/otel is', async (t) => {
  const { endpoint } = await startCollector(t)
  const { app } = await buildTestApp(t, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })
  await app.ready()
  t.ok(app.hasPlugin('@fastify/otel'))
})

t.test('a span holds no more of a request than its log line: no query, and a failure\'s answered message only', async (t) => {
  const { endpoint, exports } = await startCollector(t)
  const { app, createPlant, send, databaseFile } = await buildTestApp(t, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })
  t.equal((await send({ method: 'GET', url: '/healthz?access_token=query-secret' })).statusCode, 200)
  // A store without its table fails with the driver's message, which names the table.
  const other = new Database(databaseFile)
  other.exec('DROP TABLE plants')
  other.close()
  const failed = await createPlant({ id: 1, name: 'Fern' })
  t.equal(failed.statusCode, 500)
  await app.close()

  const spans = spansOf(exports)
  const health = only(t, spans.filter((span) => span.name === 'getHealth'), 'the health check')
  t.equal(attributeOf(health, 'url.path'), '/healthz', 'the path without its query')
  t.notOk(JSON.stringify(spans).includes('query-secret'), 'the query is nowhere')
  const create = only(t, spans.filter((span) => span.name === 'createPlant'), 'the failed create')
  t.equal(create.status?.code, statusError)
  t.equal(create.status?.message, (failed.body as { message: string }).message, 'the message its client got')
  t.notOk(JSON.stringify(spans).includes('no such table'), 'not the driver\'s')
})

t.test('a request that carries a caller\'s traceparent joins the caller\'s trace', async (t) => {
  const { endpoint, exports } = await startCollector(t)
  const { app, send } = await buildTestApp(t, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
  const parentSpanId = '00f067aa0ba902b7'
  const headers = { traceparent: `00-${traceId}-${parentSpanId}-01` }
  t.equal((await send({ method: 'GET', url: '/healthz', headers })).statusCode, 200)
  await app.close()
  const health = only(t, spansOf(exports).filter((span) => span.name === 'getHealth'), 'the health check')
  t.equal(health.traceId, traceId)
  t.equal(health.parentSpanId, parentSpanId)
})

t.test('a webhook delivery attempt is a span linked to the create that caused it, and its traceparent is sent', async (t) => {
  const { startWebhookReceiver } = await import('./support/webhook-receiver.js')
  const { registerEndpoint, webhookTestSettings } = await import('./support/webhooks.js')
  const { endpoint, exports } = await startCollector(t)
  const testApp = await buildTestApp(t, { ...webhookTestSettings, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })
  const receiver = await startWebhookReceiver(t)
  await registerEndpoint(t, testApp, receiver.url)
  t.equal((await testApp.createPlant({ id: 1, name: 'Fern' })).statusCode, 200)
  const [delivery] = await receiver.waitFor(1)
  await testApp.app.close()

  const spans = spansOf(exports)
  const created = spans.find((span) => span.name === 'createPlant')
  const handler = spans.find((span) => span.name.startsWith('handler') && span.parentSpanId === created?.spanId)
  const attempt = only(t, spans.filter((span) => span.name === 'deliver newPlant'), 'the delivery attempt')
  t.notOk(attempt.parentSpanId, 'an attempt is a root: it happens after the request was answered')
  t.equal(attributeOf(attempt, 'plant_store.webhook.event'), 'newPlant')
  t.same(attempt.links?.map(({ traceId, spanId }) => ({ traceId, spanId })), [{ traceId: handler?.traceId, spanId: handler?.spanId }],
    'it links to the handler of the create')
  t.equal(delivery!.headers.traceparent, `00-${attempt.traceId}-${attempt.spanId}-01`, 'the endpoint gets the attempt\'s traceparent')
})
