import { createServer } from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { loadOpenApiDocument } from '../src/openapi/openapi-document.js'
import { plantChanges } from '../src/store/plant-writes.js'
import { Database } from '../src/store/sqlite/sqlite-driver.js'
import { SqlitePlantStore } from '../src/store/sqlite/sqlite-plant-store.js'
import { buildTestApp } from './support/helper.js'
import { testOnEveryBackend } from './support/test-databases.js'
import { testFolder } from './support/test-folder.js'
import { startWebhookReceiver } from './support/webhook-receiver.js'
import { asManager, registerEndpoint, verifiedDelivery, webhookTestSettings } from './support/webhooks.js'

// How deliveries go: retried on the schedule with the same webhook-id, kept as failed when the
// schedule is spent, 410 disabling the endpoint, redirects not followed, Retry-After honoured,
// one endpoint never holding up another, and messages kept in the store through restarts.

interface EndpointState { state: string, pendingMessages: number, failedMessages: number, lastFailure?: { reason: string }, disabledReason?: string }

async function endpointStates (app: Awaited<ReturnType<typeof buildTestApp>>): Promise<EndpointState[]> {
  return (await app.send({ method: 'GET', url: '/webhook-endpoints', headers: asManager })).body as EndpointState[]
}

t.test('a failed delivery is retried on the schedule, with the same webhook-id, until it is delivered', async (t) => {
  const app = await buildTestApp(t, webhookTestSettings)
  let answered = 0
  const receiver = await startWebhookReceiver(t, () => ({ status: ++answered <= 2 ? 500 : 200 }))
  const { secret } = await registerEndpoint(t, app, receiver.url)
  await app.createPlant({ id: 1, name: 'Fern' })
  const attempts = await receiver.waitFor(3)
  t.equal(new Set(attempts.map(({ headers }) => headers['webhook-id'])).size, 1, 'one webhook-id on every attempt')
  for (const attempt of attempts) verifiedDelivery(t, attempt, secret)
  t.ok(attempts[1]!.receivedAt - attempts[0]!.receivedAt >= 150, 'the retry waited its turn (0.2 s, with jitter)')
  await sleep(300)
  t.equal(receiver.received.length, 3, 'nothing after the delivery')
  const [state] = await endpointStates(app)
  t.match(state, { state: 'enabled', pendingMessages: 0, failedMessages: 0, lastFailure: { reason: 'answered 500' } })
})

t.test('a message that fails every attempt is kept as failed, and counted', async (t) => {
  const app = await buildTestApp(t, { ...webhookTestSettings, WEBHOOK_RETRY_SCHEDULE: '0,0.1' })
  const receiver = await startWebhookReceiver(t, () => ({ status: 503 }))
  await registerEndpoint(t, app, receiver.url)
  await app.createPlant({ id: 1, name: 'Fern' })
  await receiver.waitFor(2)
  await sleep(400)
  t.equal(receiver.received.length, 2, 'two attempts, as the schedule has')
  t.match((await endpointStates(app))[0], { state: 'enabled', pendingMessages: 0, failedMessages: 1, lastFailure: { reason: 'answered 503' } })
  const metrics = await app.send({ method: 'GET', url: '/metrics' })
  t.match(metrics.response.body, /plant_store_webhook_deliveries_total\{event="newPlant",outcome="failed"\} 1/)
  t.match(metrics.response.body, /plant_store_webhook_deliveries_total\{event="newPlant",outcome="exhausted"\} 1/)
})

t.test('410 disables the endpoint; a redirect is a failure and is not followed; Retry-After is honoured', async (t) => {
  const app = await buildTestApp(t, { ...webhookTestSettings, WEBHOOK_RETRY_SCHEDULE: '0,0.1,0.1' })
  const gone = await startWebhookReceiver(t, () => ({ status: 410 }))
  const redirecting = await startWebhookReceiver(t, ({ path }) => path === '/moved' ? { status: 200 } : { status: 307, headers: { location: '/moved' } })
  let slowedDown = 0
  const busy = await startWebhookReceiver(t, () => ++slowedDown === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 })
  await registerEndpoint(t, app, gone.url)
  await registerEndpoint(t, app, redirecting.url)
  await registerEndpoint(t, app, busy.url)
  await app.createPlant({ id: 1, name: 'Fern' })
  await gone.waitFor(1)
  await sleep(200)
  await app.createPlant({ id: 2, name: 'Moss' })
  await redirecting.waitFor(3)
  await busy.waitFor(3)
  await sleep(300)
  t.equal(gone.received.length, 1, 'nothing more after a 410 (the second plant was created after it)')
  t.equal(redirecting.received.filter(({ path }) => path === '/moved').length, 0, 'the redirect is never followed')
  const refusedId = busy.received[0]!.headers['webhook-id']
  const [first, second] = busy.received.filter(({ headers }) => headers['webhook-id'] === refusedId)
  t.ok(second!.receivedAt - first!.receivedAt >= 950, 'a 429 with Retry-After: 1 is retried a second later, not at 0.1 s')
  const states = await endpointStates(app)
  t.match(states[0], { state: 'disabled', disabledReason: 'it answered 410 Gone', pendingMessages: 0, failedMessages: 1 }, 'the message answered 410 will not be sent: failed, not pending')
  t.match(states[1], { state: 'enabled', lastFailure: { reason: 'answered 307 (redirects are not followed)' } })
  t.equal(states[2]!.pendingMessages, 0, 'the busy endpoint got both in the end')
})

t.test('a slow endpoint does not hold up another', async (t) => {
  const app = await buildTestApp(t, { ...webhookTestSettings, WEBHOOK_TIMEOUT: 5 })
  const hanging = await startWebhookReceiver(t, () => 'hang')
  const quick = await startWebhookReceiver(t)
  await registerEndpoint(t, app, hanging.url)
  await registerEndpoint(t, app, quick.url)
  const started = Date.now()
  for (let id = 1; id <= 40; id++) await app.createPlant({ id, name: `Plant ${id}` })
  await quick.waitFor(40, 3000)
  t.ok(Date.now() - started < 3000, 'the quick endpoint has all 40 while the other holds every connection it may')
  t.ok(hanging.received.length <= 16, `at most 16 attempts in flight to the hanging one (${hanging.received.length})`)
})

t.test('an endpoint that fails every attempt for WEBHOOK_DISABLE_AFTER is disabled', async (t) => {
  const app = await buildTestApp(t, { ...webhookTestSettings, WEBHOOK_DISABLE_AFTER: 0.3, WEBHOOK_RETRY_SCHEDULE: '0,0.2,0.2,0.2,0.2' })
  const failing = await startWebhookReceiver(t, () => ({ status: 500 }))
  await registerEndpoint(t, app, failing.url)
  await app.createPlant({ id: 1, name: 'Fern' })
  await failing.waitFor(3)
  await sleep(300)
  t.match((await endpointStates(app))[0], { state: 'disabled', disabledReason: /^every attempt failed for \d+ seconds$/, pendingMessages: 0, failedMessages: 1 })
})

testOnEveryBackend(t, 'messages wait in the store while the receiver is down, across a restart', async (t, database) => {
  const server = createServer((_request, response) => response.end())
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  server.close()
  const settings = { DATABASE_URL: database.url, ...webhookTestSettings, WEBHOOK_RETRY_SCHEDULE: '0,0.2,0.2,0.2,0.2,0.2,0.2' }
  const first = await buildTestApp(t, settings)
  const { secret } = await registerEndpoint(t, first, `http://127.0.0.1:${port}/hook`)
  for (let id = 1; id <= 5; id++) await first.createPlant({ id, name: `Plant ${id}` })
  for (let waited = 0; (await endpointStates(first))[0]?.lastFailure === undefined && waited < 10_000; waited += 50) await sleep(50)
  t.match((await endpointStates(first))[0], { pendingMessages: 5, lastFailure: { reason: 'connection refused' } })
  await first.app.close()

  const receiver = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push({ path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString(), receivedAt: Date.now() })
      response.end()
    })
  })
  const received: Parameters<typeof verifiedDelivery>[1][] = []
  receiver.listen(port, '127.0.0.1')
  await once(receiver, 'listening')
  t.teardown(() => { receiver.closeAllConnections(); receiver.close() })
  const second = await buildTestApp(t, settings)
  await second.send({ method: 'GET', url: '/health' })
  for (let waited = 0; received.length < 5 && waited < 10_000; waited += 50) await sleep(50)
  t.same(received.map(({ body }) => (JSON.parse(body) as { data: { id: number } }).data.id).sort(), [1, 2, 3, 4, 5], 'every create, once')
  for (const delivery of received) verifiedDelivery(t, delivery, secret)
})

testOnEveryBackend(t, 'a clean stop lets an attempt in flight end: a slow receiver is not sent the message again', async (t, database) => {
  const answerAfterMs = 3000
  const received: string[] = []
  const receiver = createServer((request, response) => {
    received.push(String(request.headers['webhook-id']))
    request.resume()
    setTimeout(() => response.end(), answerAfterMs)
  })
  receiver.listen(0, '127.0.0.1')
  await once(receiver, 'listening')
  t.teardown(() => { receiver.closeAllConnections(); receiver.close() })
  const { port } = receiver.address() as AddressInfo
  const settings = { DATABASE_URL: database.url, ...webhookTestSettings, WEBHOOK_TIMEOUT: 10 }
  const first = await buildTestApp(t, settings)
  await registerEndpoint(t, first, `http://127.0.0.1:${port}/hook`)
  await first.createPlant({ id: 1, name: 'Fern' })
  for (let waited = 0; received.length === 0 && waited < 10_000; waited += 20) await sleep(20)
  const stopping = performance.now()
  await first.app.close()
  t.ok(performance.now() - stopping > answerAfterMs - 500, 'the stop waited for the receiver\'s answer')

  const second = await buildTestApp(t, settings)
  t.match(await endpointStates(second), [{ pendingMessages: 0, failedMessages: 0 }], 'recorded as delivered at the stop')
  // Long enough for a message still owed to be sent again (its retry is due within 0.2 s).
  for (let waited = 0; received.length === 1 && waited < 2500; waited += 50) await sleep(50)
  t.same(received.length, 1, 'sent once: no duplicate after a clean stop')
})

// Such rows are left by a batch racing the endpoint's deletion on PostgreSQL
// (test/store/message-bundles.test.ts); here a SQLite file holds them, written by hand.
t.test('messages owed to an endpoint that no longer exists are deleted once deliveries start', async (t) => {
  const filename = join(testFolder(t), 'plants.db')
  const migrated = await SqlitePlantStore.open({ filename })
  await migrated.close()
  const byHand = new Database(filename)
  t.teardown(() => byHand.close())
  byHand.prepare(`INSERT INTO webhook_messages (endpoint_id, message_id, event, plant_id, document, committed_at, next_attempt_at)
    VALUES ('00000000-0000-4000-8000-0000000000ff', 'msg_00000000000000000000000000000001', 'newPlant', 1, '{}', 1, 1)`).run()
  const leftRows = byHand.prepare('SELECT count(*) FROM webhook_messages').pluck()
  t.equal(leftRows.get(), 1)
  const app = await buildTestApp(t, { ...webhookTestSettings, DATABASE_URL: `sqlite:${filename}` })
  await app.send({ method: 'GET', url: '/health' })
  for (let waited = 0; leftRows.get() !== 0 && waited < 10_000; waited += 50) await sleep(50)
  t.equal(leftRows.get(), 0, 'swept')
})

testOnEveryBackend(t, 'an endpoint deleted while owed messages is sent none of them, and they leave the store', async (t, database) => {
  const app = await buildTestApp(t, { DATABASE_URL: database.url, ...webhookTestSettings, WEBHOOK_RETRY_SCHEDULE: '0,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1' })
  let up = false
  const receiver = await startWebhookReceiver(t, () => ({ status: up ? 200 : 503 }))
  const { id } = await registerEndpoint(t, app, receiver.url)
  for (let plantId = 1; plantId <= 5; plantId++) await app.createPlant({ id: plantId, name: `Plant ${plantId}` })
  for (let waited = 0; (await endpointStates(app))[0]?.lastFailure === undefined && waited < 10_000; waited += 50) await sleep(50)
  t.match((await endpointStates(app))[0], { pendingMessages: 5, lastFailure: { reason: 'answered 503' } })

  t.equal((await app.send({ method: 'DELETE', url: `/webhook-endpoints/${id}`, headers: asManager })).statusCode, 204)
  const deletedAt = Date.now()
  up = true
  await sleep(800)
  // An attempt already sent when the endpoint was deleted may still arrive; none begins after.
  t.same(receiver.received.filter(({ receivedAt }) => receivedAt > deletedAt + 100), [], 'nothing is sent after the deletion')
  t.same(await endpointStates(app), [], 'the endpoint is gone')
  if (database.backend === 'SQLite') {
    const file = new Database(database.url.slice('sqlite:'.length), { readonly: true })
    t.teardown(() => file.close())
    const rowsOwed = file.prepare('SELECT (SELECT count(*) FROM webhook_messages WHERE endpoint_id = ?) + (SELECT count(*) FROM webhook_message_bundles WHERE endpoint_id = ?)')
    t.equal(rowsOwed.pluck().get(id, id), 0, 'the sweep deleted its messages and bundles soon after')
  }
})

testOnEveryBackend(t, 'two instances on one database deliver each message once', async (t, database) => {
  const settings = { DATABASE_URL: database.url, ...webhookTestSettings }
  const first = await buildTestApp(t, settings)
  const second = await buildTestApp(t, settings)
  const receiver = await startWebhookReceiver(t)
  await registerEndpoint(t, first, receiver.url)
  await sleep(1100)
  await second.send({ method: 'GET', url: '/health' })
  for (let id = 1; id <= 30; id++) await (id % 2 === 0 ? first : second).createPlant({ id, name: `Plant ${id}` })
  await receiver.waitFor(30)
  await sleep(500)
  const ids = receiver.received.map(({ headers }) => headers['webhook-id'])
  t.equal(ids.length, 30, 'thirty deliveries')
  t.equal(new Set(ids).size, 30, 'no duplicate')
})

t.test('a webhook added to openapi.yaml is sent with no code: its schema, x-sent-when and its name among the events are enough', async (t) => {
  const { document } = loadOpenApiDocument()
  const modified = structuredClone(document) as typeof document & { webhooks: Record<string, unknown>, components: { schemas: Record<string, unknown> } }
  const newPlant = modified.webhooks.newPlant as { post: { requestBody: { content: { 'application/json': { schema: unknown } } } } }
  modified.components.schemas.PlantStoredEvent = {
    type: 'object',
    required: ['type', 'timestamp', 'data'],
    properties: { type: { const: 'plantStored' }, timestamp: { type: 'string', format: 'date-time' }, data: { $ref: '#/components/schemas/StoredPlant' } },
  }
  const plantStored = structuredClone(newPlant)
  plantStored.post.requestBody.content['application/json'].schema = { $ref: '#/components/schemas/PlantStoredEvent' }
  modified.webhooks.plantStored = plantStored
  // Its name among those an endpoint may subscribe to, as npm run build asks of openapi.yaml.
  const endpointBody = modified.components.schemas.NewWebhookEndpoint as { properties: { events: { items: { enum: string[] } } } }
  endpointBody.properties.events.items.enum.push('plantStored')
  const app = await buildTestApp(t, webhookTestSettings, { openApi: { document: modified, yamlText: '' } })
  const receiver = await startWebhookReceiver(t)
  await registerEndpoint(t, app, receiver.url, ['plantStored'])
  await app.createPlant({ id: 7, name: 'Ivy' })
  const [delivery] = await receiver.waitFor(1)
  t.same(JSON.parse(delivery!.body).type, 'plantStored')
  t.same(JSON.parse(delivery!.body).data, { id: 7, name: 'Ivy' })

  const broken = structuredClone(modified)
  ;(broken.webhooks.plantStored as { post: Record<string, unknown> }).post['x-sent-when'] = 'plant-watered'
  await t.rejects(buildTestApp(t, {}, { openApi: { document: broken, yamlText: '' } }), { message: `openapi.yaml: webhook plantStored's x-sent-when must be one of ${plantChanges.join(', ')}` })
})

t.test('WEBHOOK_DELIVERIES=off: the instance records what its writes owe and sends nothing; an instance that delivers sends it', async (t) => {
  const database = `sqlite:${join(testFolder(t), 'plants.db')}`
  const receiver = await startWebhookReceiver(t)
  const quiet = await buildTestApp(t, { ...webhookTestSettings, DATABASE_URL: database, WEBHOOK_DELIVERIES: 'off' })
  await registerEndpoint(t, quiet, receiver.url)
  t.equal((await quiet.createPlant({ id: 1, name: 'Fern' })).statusCode, 200)
  await sleep(1500)
  t.same(receiver.received, [], 'nothing was sent')
  t.match(await endpointStates(quiet), [{ state: 'enabled', pendingMessages: 1 }], 'the message is owed')

  const delivering = await buildTestApp(t, { ...webhookTestSettings, DATABASE_URL: database })
  // Ready (its first request makes it so), and so delivering.
  t.equal((await delivering.send({ method: 'GET', url: '/healthz' })).statusCode, 200)
  const [delivery] = await receiver.waitFor(1)
  t.same(JSON.parse(delivery!.body).data, { id: 1, name: 'Fern' }, 'an instance with WEBHOOK_DELIVERIES=on sends it')
  // A registration on the delivering instance is news to the quiet one only through the store:
  // its writes still owe the new endpoint its messages.
  const second = await startWebhookReceiver(t)
  await registerEndpoint(t, delivering, second.url)
  t.equal((await quiet.createPlant({ id: 2, name: 'Ivy' })).statusCode, 200)
  const [toSecond] = await second.waitFor(1)
  t.same(JSON.parse(toSecond!.body).data, { id: 2, name: 'Ivy' }, 'the quiet instance\'s write owed the other instance\'s endpoint its message')
})
