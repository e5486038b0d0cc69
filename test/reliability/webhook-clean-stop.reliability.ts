import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { awaitOutput } from '../support/await-output.js'
import { createPlant, listWebhookEndpoints, registerWebhookEndpoint, startServer } from '../support/running-server.js'
import { type Reply, startWebhookReceiver } from '../support/webhook-receiver.js'
import { testOnSqliteAndPrivatePostgres } from './support/every-backend.js'

// A clean stop (SIGTERM) lets a webhook attempt in flight end, however long its receiver takes
// within WEBHOOK_TIMEOUT, and keeps the endpoint's lease meanwhile: another instance on the same
// store takes the endpoint over only once the attempt is recorded, and sends nothing twice.
// Duplicates come only after a crash. Before the lease was kept, it lapsed 10 s after its last
// renewal, and the other instance sent the message still awaiting its answer again.

const token = 'reliability-clean-stop-token-0123456789'
// From the stopping instance's "shutting down": longer than what is left of its lease (10 s at
// most) and the other instance's wait for its next renewal (2 s), with time to spare on a slow
// machine; well within the attempt's WEBHOOK_TIMEOUT (60 s).
const answerAfterStopMs = 16_000

async function cleanStopSendsNothingTwice (t: Test, databaseUrl: string): Promise<void> {
  let answerFirst: (reply: Reply) => void = () => undefined
  const firstAnswer = new Promise<Reply>((resolve) => { answerFirst = resolve })
  let deliveries = 0
  const receiver = await startWebhookReceiver(t, () => deliveries++ === 0 ? firstAnswer : { status: 200 })
  const environment = { DATABASE_URL: databaseUrl, API_TOKENS: token, WEBHOOK_ALLOW_LOOPBACK: 'only', WEBHOOK_TIMEOUT: '60' }
  const stopping = await startServer(t, environment)
  const registered = await registerWebhookEndpoint(stopping.baseUrl, token, `${receiver.url}/hook`)
  t.equal(registered.status, 201, 'the endpoint is registered')
  t.equal((await createPlant(stopping.baseUrl, token, { id: 1, name: 'Plant 1' })).status, 200)
  await receiver.waitFor(1)

  const other = await startServer(t, environment)
  stopping.child.kill('SIGTERM')
  await awaitOutput(stopping.child, stopping.output, /"msg":"shutting down"/, 'the first instance to log that it is shutting down', 10_000)
  await sleep(answerAfterStopMs)
  answerFirst({ status: 200 })
  t.equal(await stopping.exited, 0, 'the stopping instance exits 0 once its attempt is answered')

  t.equal((await createPlant(other.baseUrl, token, { id: 2, name: 'Plant 2' })).status, 200)
  await receiver.waitFor(2, 15_000)
  // A message sent again would be sent before the later one; a moment more catches one in flight.
  await sleep(1000)
  const sent = receiver.received.map(({ headers, body }) => `${String(headers['webhook-id'])} ${/"name":"([^"]+)"/.exec(body)?.[1]}`)
  t.equal(sent.length, 2, `each message was sent once: ${sent.join(', ')}`)
  t.match(sent, [/ Plant 1$/, / Plant 2$/], 'the first by the stopping instance, the second by the other')
  const listed = await listWebhookEndpoints(other.baseUrl, token)
  t.match(await listed.json(), [{ state: 'enabled', pendingMessages: 0, failedMessages: 0 }], 'nothing is left waiting')
}

testOnSqliteAndPrivatePostgres(t, 'an attempt that outlasts the lease of a stopping instance is not sent again', cleanStopSendsNothingTwice)
