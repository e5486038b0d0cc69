import { unreachable } from '../errors/unreachable.js'
import type { LeasedWebhookEndpoint, WebhookStore } from '../store/webhook-store.js'
import { maxInFlightPerEndpoint } from './endpoint-connection.js'
import type { RetrySchedule } from './retry-schedule.js'

// After this many failures in a row the endpoint is rested (the retry schedule's waits, longer
// each time), then probed with one message at a time until one is delivered: a receiver that is
// down costs one attempt per rest, not one per message it is owed.
const failuresBeforeRest = 5

// How an endpoint fares, as the instance holding its lease sees it: since when every attempt has
// failed, its failures in a row, and its rest (after failuresBeforeRest failures, or as a
// Retry-After asked). All three are kept with the endpoint too, so that an instance that takes
// the lease over after a crash goes on from them, rather than sending everything due at once.
export class EndpointHealth {
  private failingSinceAt: number | null
  private failuresInARow: number
  private restingUntil: number
  // Recorded in the order they happened: on PostgreSQL two writes issued together may run on two
  // connections, either first, and a failure applied last would outlive the delivery after it.
  private records: Promise<void> = Promise.resolve()

  private readonly endpointId: string

  constructor (leased: LeasedWebhookEndpoint, private readonly store: WebhookStore, private readonly schedule: RetrySchedule) {
    this.endpointId = leased.id
    this.failingSinceAt = leased.failingSince
    this.failuresInARow = leased.failuresInARow
    this.restingUntil = leased.restingUntil ?? 0
  }

  // How many attempts may be in flight: none while the endpoint rests; one while it is probed,
  // after failuresBeforeRest failures in a row, until one is delivered; else as many as it may have.
  window (now: number): number {
    const state = this.state(now)
    switch (state) {
      case 'resting': return 0
      case 'probed': return 1
      case 'open': return maxInFlightPerEndpoint
      default: return unreachable(state)
    }
  }

  private state (now: number): 'resting' | 'probed' | 'open' {
    if (now < this.restingUntil) return 'resting'
    return this.failuresInARow >= failuresBeforeRest ? 'probed' : 'open'
  }

  // Since when every attempt has failed (null: the last was delivered).
  failingSince (): number | null {
    return this.failingSinceAt
  }

  async delivered (): Promise<void> {
    this.failuresInARow = 0
    this.restingUntil = 0
    if (this.failingSinceAt === null) return
    this.failingSinceAt = null
    await this.record(async () => this.store.recordSuccess(this.endpointId))
  }

  // The rest is set at once, before the record's await, so that no attempt starts meanwhile.
  async failed (now: number, reason: string, retryAfterMs: number | undefined): Promise<void> {
    this.failuresInARow++
    this.failingSinceAt ??= now
    if (retryAfterMs !== undefined) this.restingUntil = Math.max(this.restingUntil, now + retryAfterMs)
    if (this.failuresInARow >= failuresBeforeRest) {
      this.restingUntil = Math.max(this.restingUntil, now + this.schedule.restAfter(this.failuresInARow - failuresBeforeRest + 1))
    }
    const failure = { at: now, reason, failuresInARow: this.failuresInARow, restingUntil: this.restingUntil > now ? this.restingUntil : null }
    await this.record(async () => this.store.recordFailure(this.endpointId, failure))
  }

  // After the records before it, whether they were written or failed.
  private async record (write: () => Promise<void>): Promise<void> {
    const recorded = this.records.catch(() => undefined).then(write)
    this.records = recorded
    await recorded
  }
}
