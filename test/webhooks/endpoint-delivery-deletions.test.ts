import { setTimeout as sleep } from 'node:timers/promises'
import { test, type Test } from 'tap'
import type { WebhookStore } from '../../src/store/webhook-store.js'
import { EndpointDelivery } from '../../src/webhooks/endpoint-delivery.js'
import { CountingOutbox, deliveryServices, endpointAt } from '../support/endpoint-delivery-doubles.js'
import { startWebhookReceiver } from '../support/webhook-receiver.js'

// Delivered messages are deleted from the outbox together, a batch at most every 100 ms or once
// 512 have gathered. What the store refuses to delete is kept for the next deletion: never read
// or sent again by this instance meanwhile, and never left in the outbox for the endpoint's next
// holder to send again once the store takes deletions again.

const deleteEveryMs = 100
const deleteBatch = 512
// Past the delivery's read from the start of the outbox (every second), which finds again every
// message still in it.
const pastAReadFromTheStart = 1500

// Rounds as the dispatcher runs them, until `count` attempts have ended.
async function deliverAll (t: Test, delivery: EndpointDelivery, count: number): Promise<void> {
  let settled = 0
  for (const deadline = Date.now() + 20_000; settled < count && Date.now() < deadline;) {
    await delivery.pump(Date.now(), () => { settled++ })
    await sleep(5)
  }
  t.equal(settled, count, `the ${count} attempts ended`)
}

// Rounds that read the outbox from its start, and would send whatever they found not in hand.
async function roundsPastAReadFromTheStart (delivery: EndpointDelivery): Promise<void> {
  for (const at of [Date.now() + pastAReadFromTheStart, Date.now() + 2 * pastAReadFromTheStart]) {
    await delivery.pump(at, () => undefined)
    await sleep(50)
  }
}

test('a refused deletion keeps its messages for the next, and none is read or sent again meanwhile', async (t) => {
  const receiver = await startWebhookReceiver(t)
  const outbox = new CountingOutbox()
  const delivery = new EndpointDelivery(endpointAt(receiver), deliveryServices(outbox.store))
  t.teardown(async () => delivery.close())
  for (let i = 0; i < 3; i++) outbox.add()
  await deliverAll(t, delivery, 3)

  outbox.refusingDeletions = true
  await t.rejects(delivery.flushDue(Date.now()), 'the deletion was refused')
  await roundsPastAReadFromTheStart(delivery)
  t.equal(receiver.received.length, 3, 'nothing was sent again')

  outbox.refusingDeletions = false
  await delivery.flushDue(Date.now() + deleteEveryMs)
  t.same(outbox.deletions, [[1, 2, 3], [1, 2, 3]], 'the next deletion deleted the kept messages')
  t.same(outbox.waiting, [], 'and the outbox holds none of them')
})

test('after a refusal a full batch waits for the interval, and what gathered is deleted a batch at a time', async (t) => {
  const receiver = await startWebhookReceiver(t)
  const outbox = new CountingOutbox()
  const delivery = new EndpointDelivery(endpointAt(receiver), deliveryServices(outbox.store))
  t.teardown(async () => delivery.close())
  const delivered = deleteBatch + 88
  for (let i = 0; i < delivered; i++) outbox.add()
  await deliverAll(t, delivery, delivered)

  outbox.refusingDeletions = true
  await t.rejects(delivery.flushDue(Date.now()))
  t.same(outbox.deletions.map((seqs) => seqs.length), [deleteBatch], 'one batch was asked for, not all that gathered')
  await delivery.flushDue(Date.now())
  t.equal(outbox.deletions.length, 1, 'a full batch gathered does not ask again before the interval once refused')

  outbox.refusingDeletions = false
  await delivery.flushDue(Date.now() + deleteEveryMs)
  t.same(outbox.deletions.at(-1), outbox.deletions[0], 'the refused batch, first')
  await delivery.flushAll()
  t.same(outbox.deletions.map((seqs) => seqs.length), [deleteBatch, deleteBatch, 88], 'then the rest')
  t.same(outbox.waiting, [], 'every delivered message is deleted')
  t.equal(new Set(receiver.received.map(({ headers }) => headers['webhook-id'])).size, delivered, 'each was sent once')
})

test('a delivery whose record the store refused stays in hand, to be deleted, and is not sent again', async (t) => {
  const receiver = await startWebhookReceiver(t)
  const outbox = new CountingOutbox()
  // An endpoint recovering from failures: its first delivery writes the end of its failing.
  const store = { ...outbox.store, recordSuccess: async () => { throw new Error('the store refuses the record') } } as unknown as WebhookStore
  const delivery = new EndpointDelivery(endpointAt(receiver, { failingSince: Date.now() - 1000, failuresInARow: 1 }), deliveryServices(store))
  t.teardown(async () => delivery.close())
  outbox.add()
  await deliverAll(t, delivery, 1)
  await roundsPastAReadFromTheStart(delivery)
  t.equal(receiver.received.length, 1, 'the delivered message was not sent again')
  await delivery.flushAll()
  t.same(outbox.waiting, [], 'and it was deleted')
})
