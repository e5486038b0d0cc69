import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { createPlant, listWebhookEndpoints, registerWebhookEndpoint, startServer } from '../support/running-server.js'
import { startWebhookReceiver } from '../support/webhook-receiver.js'
import { testOnSqliteAndPrivatePostgres } from './support/every-backend.js'

// An endpoint that asked for a rest (429 with Retry-After) is rested as long as it asked, even
// when the instance that heard it is killed (SIGKILL) and another takes its lease over (10 s
// after the last renewal): the rest is kept with the endpoint. Kept only in the holder's memory,
// the next holder sent every message then due as soon as it took over, some 10 s early.

const token = 'reliability-takeover-token-0123456789'
const retryAfterSeconds = 20

async function restSurvivesTakeover (t: Test, databaseUrl: string): Promise<void> {
  let busy = true
  const receiver = await startWebhookReceiver(t, () => busy ? { status: 429, headers: { 'retry-after': String(retryAfterSeconds) } } : { status: 200 })
  const environment = { DATABASE_URL: databaseUrl, API_TOKENS: token, WEBHOOK_ALLOW_LOOPBACK: 'only', WEBHOOK_RETRY_SCHEDULE: '0,1,1' }
  const first = await startServer(t, environment)
  const registered = await registerWebhookEndpoint(first.baseUrl, token, `${receiver.url}/hook`)
  t.equal(registered.status, 201, 'the endpoint is registered')
  t.equal((await createPlant(first.baseUrl, token, { id: 1, name: 'Plant 1' })).status, 200)
  const [asked] = await receiver.waitFor(1)
  const restEndsAt = asked!.receivedAt + retryAfterSeconds * 1000
  // The answer is recorded, then the holder dies without letting the lease go.
  await sleep(500)
  first.child.kill('SIGKILL')
  await first.exited
  busy = false

  const second = await startServer(t, environment)
  for (let plant = 2; plant <= 6; plant++) t.equal((await createPlant(second.baseUrl, token, { id: plant, name: `Plant ${plant}` })).status, 200)
  await receiver.waitFor(7, retryAfterSeconds * 1000 + 15_000)
  const early = receiver.received.slice(1).filter(({ receivedAt }) => receivedAt < restEndsAt)
  t.same(early.map(({ receivedAt }) => `${((restEndsAt - receivedAt) / 1000).toFixed(1)} s early`), [],
    `nothing was sent in the ${retryAfterSeconds} s the endpoint asked for, though the instance that heard it was killed`)
  t.equal(new Set(receiver.received.slice(1).map(({ body }) => /"name":"([^"]+)"/.exec(body)?.[1])).size, 6, 'then all six plants were delivered')
  // Delivered messages are deleted from the outbox a batch at a time, within 100 ms.
  await sleep(500)
  const listed = await listWebhookEndpoints(second.baseUrl, token)
  t.match(await listed.json(), [{ state: 'enabled', pendingMessages: 0, failedMessages: 0 }], 'nothing is left waiting')
}

testOnSqliteAndPrivatePostgres(t, 'a rest asked for outlives the instance that heard it', restSurvivesTakeover)
