import { randomBytes } from 'node:crypto'
import type { PlantRow } from './plant-row.js'
import type { PlantChange } from './plant-writes.js'

export type { PlantChange } from './plant-writes.js'

// One message, as the outbox keeps it until every endpoint subscribed to its event has it: what
// it tells of, from which the webhooks compose its body as they send it.
export interface OutboxMessage {
  // `msg_` and 32 hex digits: the webhook-id of every attempt, to every endpoint.
  readonly messageId: string
  // The webhook's name in openapi.yaml.
  readonly event: string
  // The plant as the change left it, or as it was stored before a delete.
  readonly plant: PlantRow
  readonly traceparent: string | undefined
  // When its first attempt is due.
  readonly dueAt: number
}

// What the webhooks ask of the store's writes (src/webhooks/): the messages a committed change
// sends, written in the same transaction as the change (a transactional outbox). The store joins
// each with the enabled endpoints subscribed to its event at commit. None when no endpoint is
// subscribed, which costs a create nothing.
export interface Outbox {
  // Whether any endpoint may be owed a message of the change: when not, the store writes none.
  wants (change: PlantChange): boolean
  messagesOf (change: PlantChange, plant: PlantRow, committedAt: number, traceparent: string | undefined): readonly OutboxMessage[]
  // For a store that writes a batch's messages together (bundles: SQLite's, and PostgreSQL's for a
  // batch of creates): the webhooks a change sends, by name, and when a message committed at
  // committedAt is first due.
  webhooksOf (change: PlantChange): readonly string[]
  firstAttemptAt (committedAt: number): number
  // Told once a batch that may have written messages (mayHaveWrittenMessages,
  // src/store/batched-writes.ts) has committed: they can be read now.
  committed (): void
}

export const noOutbox: Outbox = { wants: () => false, messagesOf: () => [], webhooksOf: () => [], firstAttemptAt: (committedAt) => committedAt, committed: () => undefined }

// The id of the index-th message of a bundle whose prefix is 24 random hex digits: `msg_` and 32
// hex digits, as every message id.
export function bundledMessageId (prefix: string, index: number): string {
  return `msg_${prefix}${index.toString(16).padStart(8, '0')}`
}

// The random prefixes of bundles, 12 random bytes each, taken from a pool filled 256 at a time:
// a call to randomBytes for each bundle cost a create almost a microsecond (a bundle holds the few
// creates of one batch).
const prefixBytes = 12
const prefixesPerFill = 256

export class MessageIdPrefixes {
  private pool = Buffer.alloc(0)
  private offset = 0

  next (): string {
    if (this.offset >= this.pool.length) {
      this.pool = randomBytes(prefixBytes * prefixesPerFill)
      this.offset = 0
    }
    const prefix = this.pool.toString('hex', this.offset, this.offset + prefixBytes)
    this.offset += prefixBytes
    return prefix
  }
}
