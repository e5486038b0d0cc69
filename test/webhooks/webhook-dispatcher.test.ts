import { setTimeout as sleep } from 'node:timers/promises'
import { test, type Test } from 'tap'
import type { LeasedWebhookEndpoint, MessagePosition, WebhookStore } from '../../src/store/webhook-store.js'
import { DeliveryPacer } from '../../src/webhooks/delivery-pacer.js'
import { RetrySchedule } from '../../src/webhooks/retry-schedule.js'
import { WebhookDispatcher } from '../../src/webhooks/webhook-dispatcher.js'
import { WebhookOutbox } from '../../src/webhooks/webhook-outbox.js'
import { deliveryServices, dueMessage, endpointAt } from '../support/endpoint-delivery-doubles.js'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js'

// One endpoint's statement that the store refuses (the read of what is due, the deletion of what
// was delivered) holds up no other endpoint: the dispatcher's round goes on to the others.
// Rounds are told apart by what the dispatcher hands the store: the pacer is ticked once a round,
// before its reads, and each read is given the time its round began.

// What the store was asked, in order: a read (with the time its round began, and the rounds
// ticked so far) or a refused deletion (with when it was refused).
type Asked =
  | { readonly read: string, readonly roundBegan: number, readonly ticks: number }
  | { readonly refusedDeletionAt: number }

// A pacer that counts the rounds (it is ticked once in each) and holds nothing back.
class RoundCountingPacer extends DeliveryPacer {
  ticks = 0

  override tick (now: number): void {
    this.ticks++
    super.tick(now)
  }
}

// Two endpoints at one receiver, each owed one message, leased to the dispatcher in this order:
// `refusing` first, whose statement `refused` the store refuses, then `served`.
class TwoEndpointStore {
  readonly asked: Asked[] = []
  readonly warnings: Array<{ details: object, message: string }> = []
  readonly pacer = new RoundCountingPacer()
  private readonly delivered = new Set<string>()
  private readonly endpoints: LeasedWebhookEndpoint[]

  constructor (receiver: WebhookReceiver, private readonly refused: 'read' | 'deletion') {
    this.endpoints = ['refusing', 'served'].map((id) => endpointAt(receiver, { id }))
  }

  readonly store = {
    subscriptions: async () => [null, null],
    leaseEndpoints: async () => this.endpoints,
    extendLeases: async () => this.endpoints.map(({ id }) => id),
    releaseEndpoints: async () => undefined,
    deleteMessagesOfDeletedEndpoints: async () => 0,
    recordSuccess: async () => undefined,
    dueMessages: async (endpointId: string, roundBegan: number, after: MessagePosition) => {
      this.asked.push({ read: endpointId, roundBegan, ticks: this.pacer.ticks })
      if (endpointId === 'refusing' && this.refused === 'read') throw new Error('the store refuses the read')
      return after.seq < 1 && !this.delivered.has(endpointId) ? [dueMessage(1, `msg_${endpointId}`)] : []
    },
    deleteMessages: async (endpointId: string) => {
      if (endpointId === 'refusing' && this.refused === 'deletion') {
        // A store that takes a moment to refuse, as one out of reach does: the round began
        // before the refusal, by these few ms at least.
        await sleep(5)
        this.asked.push({ refusedDeletionAt: Date.now() })
        throw new Error('the store refuses the deletion')
      }
      this.delivered.add(endpointId)
    },
  } as unknown as WebhookStore

  startDispatcher (t: Test): WebhookDispatcher {
    let outboxCommits = 0
    const dispatcher = new WebhookDispatcher(
      this.store,
      new WebhookOutbox([], new RetrySchedule('0'), () => undefined),
      // Every read may find something new, so that every round reads each endpoint.
      deliveryServices(this.store, { pacer: this.pacer, outboxCommitsHere: () => outboxCommits++ }),
      { info: () => undefined, warn: (details, message) => { this.warnings.push({ details, message }) } }
    )
    dispatcher.start()
    t.teardown(async () => dispatcher.stop())
    return dispatcher
  }
}

test('a read the store refuses for one endpoint leaves the round to read and send to the others', async (t) => {
  const receiver = await startWebhookReceiver(t)
  const twoEndpoints = new TwoEndpointStore(receiver, 'read')
  const dispatcher = twoEndpoints.startDispatcher(t)
  await receiver.waitFor(1)
  await dispatcher.stop()

  const firstRound = twoEndpoints.asked.flatMap((asked) => 'read' in asked && asked.ticks === 1 ? [asked.read] : [])
  t.same(firstRound, ['refusing', 'served'], 'the first round read the endpoint after the refused one')
  t.same(receiver.received.map(({ headers }) => headers['webhook-id']), ['msg_served'], 'and sent its message')
  t.match(twoEndpoints.warnings, [{ details: { endpointId: 'refusing' }, message: /the store refused to read or write their messages/ }],
    'the refusal was told once, naming its endpoint')
})

test('a deletion the store refuses for one endpoint leaves the round to read the others', async (t) => {
  const receiver = await startWebhookReceiver(t)
  const twoEndpoints = new TwoEndpointStore(receiver, 'deletion')
  const dispatcher = twoEndpoints.startDispatcher(t)
  await receiver.waitFor(2)
  // Each refused deletion, with the first read of the other endpoint after it, once there is one:
  // in the refusal's own round that read began before the refusal; a round ended by the refusal
  // would leave it to the next round, which begins after.
  const refusalsAndNextReads = (): Array<{ refusedAt: number, nextReadRoundBegan: number }> => twoEndpoints.asked.flatMap((asked, index) => {
    if (!('refusedDeletionAt' in asked)) return []
    const next = twoEndpoints.asked.slice(index + 1).find((later) => 'read' in later && later.read === 'served')
    return next !== undefined && 'read' in next ? [{ refusedAt: asked.refusedDeletionAt, nextReadRoundBegan: next.roundBegan }] : []
  })
  // The first deletion after a delivery comes within 100 ms, and a refused one again 100 ms later.
  for (const deadline = Date.now() + 5000; refusalsAndNextReads().length < 3 && Date.now() < deadline;) await sleep(20)
  const seen = refusalsAndNextReads()
  await dispatcher.stop()

  t.ok(seen.length >= 3, `deletions were refused and the other endpoint read after them (${seen.length} times)`)
  // A round still ends at a refusal once a renewal of the leases is due (every 2 s): one of the
  // refusals may fall there.
  const inTheSameRound = seen.filter(({ refusedAt, nextReadRoundBegan }) => nextReadRoundBegan < refusedAt)
  t.ok(inTheSameRound.length >= seen.length - 1, `the rounds of ${inTheSameRound.length} of the ${seen.length} refusals read the other endpoint after it`)
  t.same(receiver.received.map(({ headers }) => headers['webhook-id']).sort(), ['msg_refusing', 'msg_served'], 'each message was sent once')
})
