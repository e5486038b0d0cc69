import { randomUUID } from 'node:crypto'
import type { WebhookDefinition } from '../openapi/webhook-definitions.js'
import type { Outbox, OutboxMessage, PlantChange } from '../store/outbox.js'
import type { PlantRow } from '../store/plant-store.js'
import type { RetrySchedule } from './retry-schedule.js'

// The messages the store writes with each change (src/store/outbox.ts): one per webhook of
// openapi.yaml sent for the change that some enabled endpoint is subscribed to. Which ones are
// wanted is known from the endpoints (update), read again every second and after every change
// made here, so that a change of the endpoints on another instance takes effect within seconds.
// The store itself joins each message with the endpoints subscribed at commit.
export class WebhookOutbox implements Outbox {
  private wanted: ReadonlyMap<PlantChange, readonly WebhookDefinition[]>

  constructor (
    private readonly definitions: readonly WebhookDefinition[],
    private readonly schedule: RetrySchedule,
    // Told when a batch that may have written messages committed (the store's BatchedWrites asks
    // mayHaveWrittenMessages), so that delivery starts without waiting for a poll.
    private readonly messagesMayBeCommitted: () => void
  ) {
    // Until the endpoints are first read (PostgreSQL may be out of reach at start), every webhook
    // counts as wanted: the store's join with the endpoints then decides, and none is missed.
    this.wanted = this.wantedBy([null])
  }

  // The events each enabled endpoint is subscribed to (null: every one).
  update (subscriptions: ReadonlyArray<readonly string[] | null>): void {
    this.wanted = this.wantedBy(subscriptions)
  }

  private wantedBy (subscriptions: ReadonlyArray<readonly string[] | null>): ReadonlyMap<PlantChange, readonly WebhookDefinition[]> {
    const subscribed = (name: string): boolean => subscriptions.some((events) => events === null || events.includes(name))
    const wanted = new Map<PlantChange, WebhookDefinition[]>()
    for (const definition of this.definitions) {
      if (subscribed(definition.name)) wanted.set(definition.sentWhen, [...(wanted.get(definition.sentWhen) ?? []), definition])
    }
    return wanted
  }

  wants (change: PlantChange): boolean {
    return this.wanted.has(change)
  }

  // The store keeps each message's plant; its body is composed as it is sent
  // (src/webhooks/webhook-request.ts), the same bytes at every attempt.
  messagesOf (change: PlantChange, plant: PlantRow, committedAt: number, traceparent: string | undefined): readonly OutboxMessage[] {
    const definitions = this.wanted.get(change)
    if (definitions === undefined) return []
    return definitions.map(({ name }) => ({
      messageId: `msg_${randomUUID().replaceAll('-', '')}`,
      event: name,
      plant,
      traceparent,
      dueAt: this.schedule.firstAttemptAt(committedAt),
    }))
  }

  webhooksOf (change: PlantChange): readonly string[] {
    const definitions = this.wanted.get(change)
    if (definitions === undefined) return []
    return definitions.map(({ name }) => name)
  }

  firstAttemptAt (committedAt: number): number {
    return this.schedule.firstAttemptAt(committedAt)
  }

  // After the commit, not as the messages are written: on PostgreSQL a read started between the
  // two would find nothing, and the deliveries would take it that nothing was new. The store's
  // BatchedWrites tells only a batch that may have written messages (mayHaveWrittenMessages), so
  // no check of the subscriptions is repeated here.
  committed (): void {
    this.messagesMayBeCommitted()
  }
}
