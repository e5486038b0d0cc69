import { type PlantRow, plantWithId } from './plant-row.js'

// A change the store commits that a webhook may tell of (openapi.yaml's `x-sent-when`).
export const plantChanges = ['plant-created', 'plant-deleted'] as const
export type PlantChange = (typeof plantChanges)[number]

// One message, as the outbox keeps it until every endpoint subscribed to its event has it.
export interface OutboxMessage {
  // `msg_` and 32 hex digits: the webhook-id of every attempt, to every endpoint.
  readonly messageId: string
  // The webhook's name in openapi.yaml.
  readonly event: string
  // The body, written once, so that every attempt sends the same bytes.
  readonly body: string
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

// A message's body, as Standard Webhooks lays it out: the webhook's name, the commit's time and
// the plant.
export function messageBody (event: string, committedAt: number, plant: PlantRow): string {
  return `{"type":${JSON.stringify(event)},"timestamp":"${new Date(committedAt).toISOString()}","data":${plantWithId(plant)}}`
}

// The id of the index-th message of a bundle whose prefix is 24 random hex digits: `msg_` and 32
// hex digits, as every message id.
export function bundledMessageId (prefix: string, index: number): string {
  return `msg_${prefix}${index.toString(16).padStart(8, '0')}`
}
