import { setTimeout as sleep } from 'node:timers/promises'
import { Webhook } from 'standardwebhooks'
import { test } from 'tap'
import type { EndpointFailure, WebhookStore } from '../../src/store/webhook-store.js'
import { EndpointDelivery } from '../../src/webhooks/endpoint-delivery.js'
import { RetrySchedule } from '../../src/webhooks/retry-schedule.js'
import type { WebhookObserver } from '../../src/observability/service-metrics.js'
import { startWebhookReceiver } from '../support/webhook-receiver.js'
import { CountingOutbox, deliveryServices, endpointAt } from '../support/endpoint-delivery-doubles.js'

test('a delivery that read every due message reads the outbox again only after a commit here, or after a while', async (t) => {
  const receiver = await startWebhookReceiver(t)
  const outbox = new CountingOutbox()
  let outboxCommits = 0
  const delivery = new EndpointDelivery(
    endpointAt(receiver),
    deliveryServices(outbox.store, { timeoutMs: 1000, outboxCommitsHere: () => outboxCommits }))
  t.teardown(async () => delivery.close())
  // Rounds as the dispatcher runs them, all at one moment: one on every attempt's end.
  const now = Date.now()
  const settled = { count: 0 }
  const round = async (): Promise<void> => delivery.pump(now, () => { settled.count++ })

  for (let i = 0; i < 3; i++) outbox.add()
  await round()
  t.equal(outbox.reads, 1)
  while (settled.count < 3) {
    await sleep(5)
    await round()
  }
  t.equal(receiver.received.length, 3)
  t.equal(outbox.reads, 1, 'the rounds after each attempt did not read the outbox again')

  outbox.add()
  outboxCommits++
  await round()
  t.equal(outbox.reads, 2, 'a commit here is read at once')
  await receiver.waitFor(4)

  outbox.add()
  await round()
  t.equal(outbox.reads, 2, 'a commit elsewhere waits')
  await delivery.pump(now + 25, () => undefined)
  t.equal(outbox.reads, 3, 'and is read once the time has passed')
  await receiver.waitFor(5)
})

test('attempts cut short as a 410 disables their endpoint are not its last failure', async (t) => {
  let answered = 0
  // The first attempt is told the endpoint is gone; the others wait until their connections close.
  const receiver = await startWebhookReceiver(t, () => answered++ === 0 ? { status: 410 } : 'hang')
  const outbox = new CountingOutbox()
  const failures: string[] = []
  const disabled: string[] = []
  const store = {
    ...outbox.store,
    recordFailure: async (_endpointId: string, { reason }: EndpointFailure) => { failures.push(reason) },
    disableEndpoint: async (_endpointId: string, _at: number, reason: string) => { disabled.push(reason) },
    rescheduleMessage: async () => undefined,
  } as unknown as WebhookStore
  const delivery = new EndpointDelivery(
    endpointAt(receiver),
    deliveryServices(store))
  for (let i = 0; i < 3; i++) outbox.add()
  await delivery.pump(Date.now(), () => undefined)
  while (!delivery.disabled) await sleep(10)
  // The dispatcher lets a disabled endpoint go, closing its connections.
  await delivery.close()
  await sleep(50)
  t.same(disabled, ['it answered 410 Gone'])
  t.same(failures, ['answered 410 Gone'], 'the endpoint\'s last failure is its 410')
})

// A holder killed while its endpoint rested (five failures in a row, or a Retry-After) leaves the
// rest in the store; the instance that takes the lease over is leased it, and neither sends before
// it ends nor forgets the failures: one message at a time until one is delivered.
test('a delivery leased an endpoint that rests waits for the rest to end, then probes with one message at a time', async (t) => {
  const receiver = await startWebhookReceiver(t, () => ({ status: 500 }))
  const outbox = new CountingOutbox()
  const failures: EndpointFailure[] = []
  const store = {
    ...outbox.store,
    recordFailure: async (_endpointId: string, failure: EndpointFailure) => { failures.push(failure) },
    rescheduleMessage: async () => undefined,
  } as unknown as WebhookStore
  const restingUntil = Date.now() + 300
  const delivery = new EndpointDelivery(
    endpointAt(receiver, { failingSince: Date.now() - 60_000, failuresInARow: 5, restingUntil }),
    // The rests after failures 5, 6, ...: the schedule's waits from its second on, a second each.
    deliveryServices(store, { schedule: new RetrySchedule('0,1,1') }))
  t.teardown(async () => delivery.close())
  for (let i = 0; i < 5; i++) outbox.add()
  const pumpFor = async (ms: number): Promise<void> => {
    for (const until = Date.now() + ms; Date.now() < until; await sleep(10)) await delivery.pump(Date.now(), () => undefined)
  }

  await pumpFor(restingUntil - Date.now() - 50)
  t.equal(receiver.received.length, 0, 'nothing is sent while the endpoint rests')
  for (const deadline = Date.now() + 5000; failures.length === 0 && Date.now() < deadline;) await pumpFor(50)
  await pumpFor(200)
  t.equal(receiver.received.length, 1, 'after the rest, one message, not the five waiting')
  t.equal(failures.length, 1)
  const [failure] = failures
  t.equal(failure?.failuresInARow, 6, 'its failure is the sixth in a row')
  t.ok(failure !== undefined && failure.restingUntil !== null && failure.restingUntil - failure.at === 1000,
    'and rests the endpoint again, as long as the schedule says, recorded for the next holder')
})

// An endpoint leased elsewhere meanwhile (its lease lapsed while the store was out of reach) is
// let go, its attempts cut short: the next holder sends their messages and keeps the endpoint's
// record, which the cut attempts must not count as the endpoint's failures, nor rest it for.
test("attempts cut short as their endpoint is let go are not the endpoint's failures, and their messages are not rescheduled", async (t) => {
  const receiver = await startWebhookReceiver(t, () => 'hang')
  const outbox = new CountingOutbox()
  const written: string[] = []
  const store = {
    ...outbox.store,
    recordFailure: async () => { written.push('failure') },
    rescheduleMessage: async () => { written.push('reschedule') },
  } as unknown as WebhookStore
  const settled = { count: 0 }
  const delivery = new EndpointDelivery(
    endpointAt(receiver),
    deliveryServices(store))
  for (let i = 0; i < 6; i++) outbox.add()
  await delivery.pump(Date.now(), () => { settled.count++ })
  await receiver.waitFor(6)
  await delivery.close()
  for (const deadline = Date.now() + 5000; settled.count < 6 && Date.now() < deadline;) await sleep(10)
  t.equal(settled.count, 6, 'the six attempts ended as the connections closed')
  t.same(written, [], 'nothing was written of the endpoint or its messages')
})

// A failure's settling awaits its records; a delivery meanwhile ends the endpoint's failing. The
// check for WEBHOOK_DISABLE_AFTER that follows must see that, not disable an endpoint that has
// just been delivered to (read as failing since the epoch).
test('a delivery while a failure is being recorded keeps the endpoint from being disabled', async (t) => {
  let answered = 0
  const receiver = await startWebhookReceiver(t, () => ++answered === 1 ? { status: 500 } : { status: 200 })
  const outbox = new CountingOutbox()
  let releaseFailure = (): void => undefined
  const failureHeld = new Promise<void>((resolve) => { releaseFailure = resolve })
  const disabled: string[] = []
  const outcomes: string[] = []
  let successes = 0
  const store = {
    ...outbox.store,
    recordFailure: async () => failureHeld,
    recordSuccess: async () => { successes++ },
    rescheduleMessage: async () => undefined,
    disableEndpoint: async (_endpointId: string, _at: number, reason: string) => { disabled.push(reason) },
  } as unknown as WebhookStore
  const delivery = new EndpointDelivery(
    endpointAt(receiver, { failingSince: Date.now() - 1000, failuresInARow: 1 }),
    deliveryServices(store, { observer: { attempted: (_event: string, outcome: string) => { outcomes.push(outcome) }, delivered: () => undefined } as unknown as WebhookObserver }))
  t.teardown(async () => delivery.close())
  for (let i = 0; i < 2; i++) outbox.add()
  const settled = { count: 0 }
  await delivery.pump(Date.now(), () => { settled.count++ })
  await receiver.waitFor(2)
  // The delivery is told while the failure's record is held.
  for (const deadline = Date.now() + 5000; !outcomes.includes('delivered') && Date.now() < deadline;) await sleep(10)
  t.same(outcomes, ['delivered'], 'the delivery was told while the failure was being recorded')
  releaseFailure()
  for (const deadline = Date.now() + 5000; settled.count < 2 && Date.now() < deadline;) await sleep(10)
  t.equal(settled.count, 2, 'both attempts settled')
  t.equal(successes, 1, 'the delivery was recorded')
  t.same(disabled, [], 'the endpoint was not disabled')
  t.equal(delivery.disabled, false)
})

// Every secret the service writes signs; one not of that form (a row edited by hand) fails its own endpoint's attempts, with the reason, and sends nothing unsigned.
// A rotation that brings a good secret makes them sign again.
test('an endpoint whose secret cannot sign fails its attempts, and signs again once it has a good one', async (t) => {
  const receiver = await startWebhookReceiver(t)
  const outbox = new CountingOutbox()
  const failures: string[] = []
  const store = {
    ...outbox.store,
    recordFailure: async (_endpointId: string, { reason }: EndpointFailure) => { failures.push(reason) },
    rescheduleMessage: async () => undefined,
  } as unknown as WebhookStore
  const endpoint = endpointAt(receiver)
  const delivery = new EndpointDelivery({ ...endpoint, secret: 'whsec_a' }, deliveryServices(store))
  t.teardown(async () => delivery.close())
  outbox.add()
  await delivery.pump(Date.now(), () => undefined)
  for (const deadline = Date.now() + 5000; failures.length === 0 && Date.now() < deadline;) await sleep(10)
  t.match(failures, [/^its secret cannot sign: /], 'the attempt failed, saying why')
  t.equal(receiver.received.length, 0, 'nothing was sent')

  // The message failed is still due (the store's reschedule here keeps it as it was).
  delivery.update(endpoint)
  for (const deadline = Date.now() + 5000; receiver.received.length === 0 && Date.now() < deadline; await sleep(10)) {
    await delivery.pump(Date.now() + 1000, () => undefined)
  }
  t.equal(receiver.received[0]?.headers['webhook-id'], 'msg_1', 'sent once the secret is good')
  t.doesNotThrow(() => new Webhook(endpoint.secret).verify(receiver.received[0]!.body, receiver.received[0]!.headers as Record<string, string>))
})
