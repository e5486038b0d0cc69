import { randomUUID } from 'node:crypto'
import type { WebhookStore } from '../store/webhook-store.js'
import { type DeliveryServices, EndpointDelivery } from './endpoint-delivery.js'
import type { WebhookOutbox } from './webhook-outbox.js'

export interface DispatcherLogger {
  info (details: object, message: string): void
  warn (details: object, message: string): void
}

// How often the outbox is read when nothing nudges it, and the endpoints' subscriptions.
const pollMs = 50
const subscriptionsEveryMs = 1000
// An endpoint's lease: renewed every 2 s, taken over by another instance 10 s after its holder
// stopped renewing it (it died, or lost its database).
const leaseMs = 10_000
const renewEveryMs = 2000
// A failure to reach the store is logged once a minute at most while it lasts.
const warnEveryMs = 60_000
// How often the messages of deleted endpoints are looked for (src/store/webhook-store.ts): rows
// no delivery will ever read, left by a write that raced an endpoint's deletion (PostgreSQL) or
// by the deletion itself (SQLite). While a sweep finds some, another follows a poll later.
const sweepEveryMs = 60_000

// The deliveries of this instance: the endpoints whose lease it holds, each delivering on its
// own (src/webhooks/endpoint-delivery.ts), so that one slow or dead endpoint delays no other.
// Every instance runs one; on PostgreSQL, or on one SQLite file shared by processes, each
// endpoint's messages are attempted by the one instance holding its lease at a time.
export class WebhookDispatcher {
  private readonly owner = randomUUID()
  private readonly deliveries = new Map<string, EndpointDelivery>()
  private timer: NodeJS.Timeout | undefined
  private round: Promise<void> | undefined
  private again = false
  // Until start(), no round runs: an instance that does not deliver (WEBHOOK_DELIVERIES=off) never
  // starts, and a change nudging it must not send anything.
  private stopped = true
  private nextLeaseAt = 0
  private nextSubscriptionsAt = 0
  private nextSweepAt = 0
  private sweptSoFar = 0
  private enabledEndpoints = 0
  private lastWarnedAt = 0
  private rounds = 0

  constructor (
    private readonly store: WebhookStore,
    private readonly outbox: WebhookOutbox,
    private readonly services: DeliveryServices,
    private readonly logger: DispatcherLogger
  ) {}

  start (): void {
    this.stopped = false
    this.timer = setInterval(this.nudge, pollMs).unref()
    this.nudge()
  }

  // Reads the endpoints again at once (after a change made on this instance), and sweeps: an
  // endpoint deleted here leaves its messages to the sweep on SQLite.
  refresh (): void {
    this.nextLeaseAt = 0
    this.nextSubscriptionsAt = 0
    this.nextSweepAt = 0
    this.nudge()
  }

  // Runs a round now, or once the one running ends.
  readonly nudge = (): void => {
    if (this.stopped) return
    if (this.round !== undefined) {
      this.again = true
      return
    }
    this.round = this.runRounds().finally(() => { this.round = undefined })
  }

  // Starts no more attempts, lets those in flight end (by their answer or their timeout), records
  // what was delivered, and lets the endpoints' leases go.
  async stop (): Promise<void> {
    this.stopped = true
    clearInterval(this.timer)
    const stopKeepingLeases = this.keepLeases()
    try {
      await this.round
      await Promise.all([...this.deliveries.values()].map(async (delivery) => delivery.finish()))
      // Each endpoint's record on its own, and all at once (a store out of reach takes one timeout,
      // not one an endpoint): one refused leaves the others' recorded, and only its own messages
      // to be sent again.
      const records = await Promise.allSettled([...this.deliveries.values()].map(async (delivery) => delivery.flushAll()))
      const unrecorded = records.filter(({ status }) => status === 'rejected').length
      if (unrecorded > 0) {
        this.logger.warn({ endpoints: unrecorded }, 'stopping: what was delivered to some endpoints could not be recorded, and will be sent to them again')
      }
      stopKeepingLeases()
      await this.store.releaseEndpoints(this.owner)
    } catch {
      // The leases lapse by themselves; what was delivered and not yet deleted is sent again.
    } finally {
      stopKeepingLeases()
    }
    this.deliveries.clear()
  }

  // While a stop waits, its attempts may take longer than what is left of their endpoints' leases
  // (WEBHOOK_TIMEOUT is up to a minute), and their records longer still on a store that is slow
  // to answer: the leases held are extended, and no other taken, until the stop has recorded what
  // was delivered, so that no other instance takes an endpoint over and sends it again. An
  // endpoint whose lease was taken over all the same (the store out of reach for longer than a
  // lease) is let go, as a renewal lets it go. Answers the stopper.
  private keepLeases (): () => void {
    if (this.deliveries.size === 0) return () => undefined
    let extending = false
    let kept = true
    const extend = (): void => {
      // One at a time: on a store that is slow to answer, the records of the attempts need it more.
      if (extending) return
      extending = true
      this.store.extendLeases(this.owner, Date.now() + leaseMs)
        .then((held) => { if (kept) this.letGoOfAllBut(new Set(held)) }, () => undefined)
        .finally(() => { extending = false })
    }
    extend()
    const timer = setInterval(extend, renewEveryMs).unref()
    return () => {
      kept = false
      clearInterval(timer)
    }
  }

  // Lets go of the endpoints this instance no longer holds (deleted, disabled elsewhere, or leased
  // by another instance) or has disabled: what each delivered is deleted, its attempts cut short.
  private letGoOfAllBut (held: ReadonlySet<string>): void {
    for (const [id, delivery] of this.deliveries) {
      if (held.has(id) && !delivery.disabled) continue
      this.deliveries.delete(id)
      void delivery.flushAll().catch(() => undefined).finally(() => { void delivery.close().catch(() => undefined) })
    }
  }

  private async runRounds (): Promise<void> {
    do {
      this.again = false
      try {
        await this.runRound(Date.now())
      } catch (error) {
        this.warnThatTheStoreFails(error)
        return
      }
    } while (this.again && !this.stopped)
  }

  private async runRound (now: number): Promise<void> {
    if (now >= this.nextSubscriptionsAt) {
      const subscriptions = await this.store.subscriptions()
      this.outbox.update(subscriptions)
      this.enabledEndpoints = subscriptions.length
      this.nextSubscriptionsAt = now + subscriptionsEveryMs
    }
    // With no endpoint enabled there is no lease to take (and, on SQLite, no write lock to ask for).
    if (now >= this.nextLeaseAt && (this.enabledEndpoints > 0 || this.deliveries.size > 0)) {
      await this.renewLeases(now)
      this.nextLeaseAt = now + renewEveryMs
    }
    for (const [id, delivery] of this.deliveries) await this.onItsOwn(id, delivery.flushDue(now))
    // A round that was running as the service began to stop starts no attempt.
    if (this.stopped) return
    this.services.pacer.tick(performance.now())
    // Each round starts with the next endpoint, so that, while the pacer holds attempts back,
    // no endpoint takes every attempt an interval allows.
    const deliveries = [...this.deliveries]
    const first = deliveries.length === 0 ? 0 : this.rounds++ % deliveries.length
    for (const [id, delivery] of [...deliveries.slice(first), ...deliveries.slice(0, first)]) await this.onItsOwn(id, delivery.pump(now, this.nudge))
    if (now >= this.nextSweepAt) {
      this.nextSweepAt = now + sweepEveryMs
      await this.sweepMessagesOfDeletedEndpoints(now)
    }
  }

  // One endpoint's statement that the store refuses (the deletion of what it delivered, the read
  // of what is due) holds up no other endpoint's deliveries: it is told, and tried again later.
  // Not past a renewal of the leases, though: a round held up by a store out of reach (a timeout
  // each statement) ends there, so that no endpoint is sent to once its lease may have lapsed.
  private async onItsOwn (endpointId: string, work: Promise<void>): Promise<void> {
    try {
      await work
    } catch (error) {
      if (Date.now() >= this.nextLeaseAt) throw error
      this.warnThatTheStoreFails(error, { endpointId })
    }
  }

  private warnThatTheStoreFails (error: unknown, details: object = {}): void {
    const now = Date.now()
    if (now - this.lastWarnedAt < warnEveryMs) return
    this.lastWarnedAt = now
    this.logger.warn({ ...details, err: error }, 'webhook deliveries wait: the store refused to read or write their messages')
  }

  // Housekeeping, after the round's attempts: its failure is told, and cancels no delivery. A
  // sweep may delete some of what is left (SQLite a few ms' worth at a time), so another follows
  // a poll later until one finds nothing, and the whole is told once.
  private async sweepMessagesOfDeletedEndpoints (now: number): Promise<void> {
    try {
      const deleted = await this.store.deleteMessagesOfDeletedEndpoints()
      if (deleted > 0) {
        this.sweptSoFar += deleted
        // Not in every round (a commit or an attempt's end starts one), nor closer: a few ms
        // every poll leaves the event loop to the requests while a large sweep lasts, and
        // SQLite's checkpoints a pause to end in, without which its log only grows
        // (docs/benchmark.md).
        this.nextSweepAt = now + pollMs
      } else if (this.sweptSoFar > 0) {
        this.logger.info({ deleted: this.sweptSoFar }, 'deleted the webhook messages of deleted endpoints')
        this.sweptSoFar = 0
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'the webhook messages of deleted endpoints wait for the next sweep: the store cannot be written now')
    }
  }

  private async renewLeases (now: number): Promise<void> {
    const held = await this.store.leaseEndpoints(this.owner, now, now + leaseMs)
    this.letGoOfAllBut(new Set(held.map(({ id }) => id)))
    for (const endpoint of held) {
      const delivery = this.deliveries.get(endpoint.id)
      if (delivery === undefined) this.deliveries.set(endpoint.id, new EndpointDelivery(endpoint, this.services))
      else delivery.update(endpoint)
    }
  }
}
