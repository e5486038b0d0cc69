import { unreachable } from '../errors/unreachable.js'
import type { DeliveryPacer } from './delivery-pacer.js'
import type { WebhookObserver } from '../observability/service-metrics.js'
import type { DeliveryTrace } from '../observability/tracing.js'
import { beforeEveryMessage, type DueWebhookMessage, type LeasedWebhookEndpoint, type MessagePosition, type WebhookStore } from '../store/webhook-store.js'
import { DeliveredMessages } from './delivered-messages.js'
import { attemptEndsWithinMs, type AttemptOutcome, EndpointConnection } from './endpoint-connection.js'
import { EndpointHealth } from './endpoint-health.js'
import type { EndpointUrlPolicy } from '../endpoint-urls/endpoint-url-policy.js'
import type { RetrySchedule } from './retry-schedule.js'
import { EndpointSigners } from './webhook-request.js'

// What every endpoint's delivery shares.
export interface DeliveryServices {
  readonly store: WebhookStore
  readonly schedule: RetrySchedule
  readonly policy: EndpointUrlPolicy
  readonly timeoutMs: number
  // An endpoint whose every attempt has failed for this long is disabled.
  readonly disableAfterMs: number
  readonly observer: WebhookObserver | undefined
  readonly traceDelivery: (event: string, causedBy: string | undefined) => DeliveryTrace | undefined
  // Holds attempts back while requests wait for the event loop.
  readonly pacer: DeliveryPacer
  // How many batches this instance has committed that may have written messages: a count that
  // changed since a read found no more due messages says that some may have been committed since.
  readonly outboxCommitsHere: () => number
}

// Messages read from the outbox at once, beyond those already in hand.
const readAhead = 64
// Each read goes on from where the last ended, so that the messages in hand are not read again
// and again; every second it starts over from the earliest due, for a message that became due
// behind that place: one committed after messages due later (by another instance, or by a batch
// that took longer than the next one), or one read and then put back after a failure.
const readFromStartEveryMs = 1000
// After a read that found every message then due, the outbox is read again only once this
// instance has committed a batch, a failure has put a message back, or this long has passed
// (messages written by another instance or process, or due later). Every attempt's end runs a
// round: at a steady 2,000 creates a second, reading the outbox on each cost a fifth of a core,
// and most reads found nothing.
const rereadAfterMs = 25

// The delivery of one endpoint's messages, by the instance that holds its lease: up to 16
// attempts in flight, the earliest due first. Delivered messages are deleted from the outbox in
// batches (src/webhooks/delivered-messages.ts); a failed one is rescheduled on the retry
// schedule, or kept as failed.
export class EndpointDelivery {
  private readonly connection: EndpointConnection
  private readonly signers: EndpointSigners
  private readonly health: EndpointHealth
  // Messages in flight, or delivered and not yet deleted: not to be read again.
  private readonly inHand = new Set<number>()
  private queue: DueWebhookMessage[] = []
  private readonly delivered: DeliveredMessages
  private inFlight = 0
  private reading = false
  private readFrom: MessagePosition = beforeEveryMessage
  private readFromStartAt = 0
  // When the last read found every message then due (undefined: it may have left some), and the
  // batches committed here before it began.
  private foundAllDueAt: number | undefined
  private outboxCommitsAtRead = 0
  private readonly attempts = new Set<Promise<void>>()
  disabled = false
  // Let go (closed, or stopping after the wait): an outcome from now on is not the endpoint's
  // to record, and a failure is this instance cutting the attempt short.
  private letGo = false

  constructor (private endpoint: LeasedWebhookEndpoint, private readonly services: DeliveryServices) {
    this.connection = new EndpointConnection(new URL(endpoint.url), services.policy, services.timeoutMs)
    this.health = new EndpointHealth(endpoint, services.store, services.schedule)
    this.delivered = new DeliveredMessages(async (seqs) => services.store.deleteMessages(this.endpoint.id, seqs), (seqs) => {
      for (const seq of seqs) this.inHand.delete(seq)
    })
    this.signers = new EndpointSigners(endpoint)
  }

  // The endpoint as its lease was last renewed: a rotated secret signs from now on.
  update (endpoint: LeasedWebhookEndpoint): void {
    this.endpoint = endpoint
    this.signers.update(endpoint)
  }

  // Starts as many attempts as the window has room for.
  async pump (now: number, settled: () => void): Promise<void> {
    const window = this.health.window(now)
    if (this.disabled || window === 0) return
    if (this.queue.length === 0 && this.inFlight < window && !this.reading && this.mayFindMoreDue(now)) {
      this.reading = true
      const outboxCommits = this.services.outboxCommitsHere()
      try {
        if (now >= this.readFromStartAt) {
          this.readFrom = beforeEveryMessage
          this.readFromStartAt = now + readFromStartEveryMs
        }
        const limit = this.readFrom === beforeEveryMessage ? this.inHand.size + readAhead : readAhead
        const due = await this.services.store.dueMessages(this.endpoint.id, now, this.readFrom, limit)
        this.foundAllDueAt = due.length < limit ? now : undefined
        this.outboxCommitsAtRead = outboxCommits
        const last = due.at(-1)
        if (last !== undefined) this.readFrom = { nextAttemptAt: last.nextAttemptAt, seq: last.seq }
        this.queue = due.filter(({ seq }) => !this.inHand.has(seq))
      } finally {
        this.reading = false
      }
    }
    while (this.inFlight < window && this.queue.length > 0 && !this.disabled && this.services.pacer.mayStart()) {
      const message = this.queue.shift()!
      this.inHand.add(message.seq)
      this.inFlight++
      const attempt: Promise<void> = this.attempt(message).finally(() => {
        this.inFlight--
        this.attempts.delete(attempt)
        settled()
      })
      this.attempts.add(attempt)
    }
  }

  private mayFindMoreDue (now: number): boolean {
    // A wall clock set back counts as time passed.
    return this.foundAllDueAt === undefined || now - this.foundAllDueAt >= rereadAfterMs || now < this.foundAllDueAt ||
      this.services.outboxCommitsHere() !== this.outboxCommitsAtRead
  }

  // Deletes from the outbox the messages delivered since the last deletion, when it is due.
  async flushDue (now: number): Promise<void> {
    await this.delivered.deleteDue(now)
  }

  // Deletes every message delivered, until the store refuses: as the service stops, or as the
  // endpoint is let go.
  async flushAll (): Promise<void> {
    await this.delivered.deleteAll()
  }

  // Cuts the attempts in flight short, and closes the connections: for an endpoint this instance
  // no longer holds (deleted, disabled, or leased elsewhere).
  async close (): Promise<void> {
    this.letGo = true
    await this.connection.close()
  }

  // Lets the attempts in flight end, by their answer or their timeout (WEBHOOK_TIMEOUT), then
  // closes the connections: an attempt cut short may have been handled by its receiver, and
  // would be sent again, a duplicate after a clean stop. Bounded all the same: an attempt's
  // deadline ends its exchange with the endpoint, not the writes that record its outcome, which
  // a store out of reach may hold.
  async finish (): Promise<void> {
    const bound = new Promise((resolve) => setTimeout(resolve, attemptEndsWithinMs(this.services.timeoutMs) + 1000).unref())
    await Promise.race([Promise.all(this.attempts), bound])
    this.letGo = true
    await this.connection.close()
  }

  private async attempt (message: DueWebhookMessage): Promise<void> {
    const trace = this.services.traceDelivery(message.event, message.traceparent ?? undefined)
    // A secret that cannot sign fails this endpoint's attempts, and no other endpoint's.
    const { refusal } = this.signers
    const outcome: AttemptOutcome = refusal === undefined
      ? await this.connection.send(this.signers.request(message, trace?.traceparent))
      : { kind: 'failed', reason: refusal }
    trace?.end(outcome.kind === 'delivered' ? undefined : outcome.reason)
    try {
      await this.settle(message, outcome)
    } catch {
      // The store could not record the outcome (unavailable). A delivered message is among those
      // to delete already, and stays in hand; a failed one stays due, and is attempted again, with
      // the same webhook-id.
      if (outcome.kind === 'delivered') return
      this.inHand.delete(message.seq)
      this.foundAllDueAt = undefined
    }
  }

  private async settle (message: DueWebhookMessage, outcome: AttemptOutcome): Promise<void> {
    const { observer } = this.services
    const now = Date.now()
    if (outcome.kind !== 'delivered' && (this.disabled || this.letGo)) {
      // Disabled while this attempt was in flight (another attempt's 410): its messages are
      // failed with it, and an attempt cut short as its connections close is no failure of the
      // endpoint's, to be its last failure. Let go (leased elsewhere, or the service stopping):
      // the message is the next holder's, and so are the endpoint's failures and rest.
      observer?.attempted(message.event, outcome.kind === 'gone' && this.disabled ? 'gone' : 'failed')
      this.inHand.delete(message.seq)
      return
    }
    switch (outcome.kind) {
      case 'delivered':
        this.delivered.add(message.seq)
        observer?.attempted(message.event, 'delivered')
        observer?.delivered(message.event, Math.max(0, now - message.committedAt) / 1000)
        // Once let go, the endpoint's record is its next holder's to keep.
        if (!this.letGo) await this.health.delivered()
        return
      case 'gone':
        await this.health.failed(now, outcome.reason, undefined)
        observer?.attempted(message.event, 'gone')
        await this.disable(now, 'it answered 410 Gone')
        this.inHand.delete(message.seq)
        return
      case 'failed':
        await this.health.failed(now, outcome.reason, outcome.retryAfterMs)
        await this.reschedule(message, now, outcome.retryAfterMs)
        return
      default:
        return unreachable(outcome)
    }
  }

  // The message is due again as the schedule says (and no sooner than a Retry-After asked), or
  // failed for good once the schedule is spent; the endpoint is disabled once it has failed for
  // WEBHOOK_DISABLE_AFTER.
  private async reschedule (message: DueWebhookMessage, now: number, retryAfterMs: number | undefined): Promise<void> {
    const { store, schedule, observer } = this.services
    const attempts = message.attempts + 1
    let nextAttemptAt = schedule.nextAttemptAt(attempts, now)
    if (retryAfterMs !== undefined && nextAttemptAt !== null) nextAttemptAt = Math.max(nextAttemptAt, now + retryAfterMs)
    await store.rescheduleMessage(this.endpoint.id, message.seq, attempts, nextAttemptAt)
    observer?.attempted(message.event, nextAttemptAt === null ? 'exhausted' : 'failed')
    this.inHand.delete(message.seq)
    // Messages read before the failure wait for the endpoint to recover, and are read again then.
    this.queue = []
    this.readFrom = beforeEveryMessage
    this.foundAllDueAt = undefined
    const failingForMs = now - (this.health.failingSince() ?? now)
    if (failingForMs >= this.services.disableAfterMs) {
      await this.disable(now, `every attempt failed for ${Math.round(failingForMs / 1000)} seconds`)
    }
  }

  private async disable (now: number, reason: string): Promise<void> {
    this.disabled = true
    this.queue = []
    await this.services.store.disableEndpoint(this.endpoint.id, now, reason)
  }
}
