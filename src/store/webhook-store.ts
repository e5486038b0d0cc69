import type { PlantRow } from './plant-row.js'

// The webhook endpoints consumers register and the messages each is owed, in the plants'
// database (src/store/migrations.ts, versions 5 to 9). Times are milliseconds since the Unix epoch.
// Every backend implements this and passes the shared suite in test/store/.

export interface NewWebhookEndpointRow {
  readonly id: string
  readonly url: string
  // null: every webhook, those added to openapi.yaml later included.
  readonly events: readonly string[] | null
  readonly secret: string
  readonly createdAt: number
}

// An endpoint as listed: never its secrets.
export interface WebhookEndpointSummary {
  readonly id: string
  readonly url: string
  readonly events: readonly string[] | null
  readonly createdAt: number
  readonly disabledAt: number | null
  readonly disabledReason: string | null
  readonly lastFailureAt: number | null
  readonly lastFailureReason: string | null
  readonly pendingMessages: number
  readonly failedMessages: number
}

// An endpoint whose messages this instance delivers while its lease lasts.
export interface LeasedWebhookEndpoint {
  readonly id: string
  readonly url: string
  readonly secret: string
  // The secret before the last rotation, which also signs until previousSecretUntil.
  readonly previousSecret: string | null
  readonly previousSecretUntil: number | null
  // Since when every attempt has failed; null while the last one succeeded.
  readonly failingSince: number | null
  // Its failures in a row since its last delivery, and the end of its rest (null: none), as its
  // last holder recorded them: an instance that takes the lease over goes on from there.
  readonly failuresInARow: number
  readonly restingUntil: number | null
}

// A failed attempt, and what its endpoint's holder made of it.
export interface EndpointFailure {
  readonly at: number
  readonly reason: string
  readonly failuresInARow: number
  // null: the endpoint is not rested.
  readonly restingUntil: number | null
}

// A message as the outbox keeps it: what it tells of, not its body, which the webhooks compose.
export interface DueWebhookMessage {
  readonly seq: number
  readonly messageId: string
  readonly event: string
  readonly plant: PlantRow
  readonly traceparent: string | null
  readonly committedAt: number
  // The attempts made so far.
  readonly attempts: number
  // When it became due: with seq, its place in the order messages are read in.
  readonly nextAttemptAt: number
}

// A place in an endpoint's due messages, which are read in the order of (nextAttemptAt, seq).
export interface MessagePosition {
  readonly nextAttemptAt: number
  readonly seq: number
}

// The place before every message (times and seqs are never negative).
export const beforeEveryMessage: MessagePosition = { nextAttemptAt: -1, seq: -1 }

export interface WebhookStore {
  createEndpoint (endpoint: NewWebhookEndpointRow): Promise<void>
  // Oldest first.
  listEndpoints (): Promise<WebhookEndpointSummary[]>
  // Deletes the endpoint, false when there was none. From then on no read returns its messages
  // (an instance that holds them lets them go at its next lease renewal) and no count counts them;
  // PostgreSQL deletes them with it, SQLite leaves them to the sweep.
  deleteEndpoint (id: string): Promise<boolean>
  // false when there is no such endpoint.
  rotateSecret (id: string, secret: string, previousSecretUntil: number): Promise<boolean>
  // The events each enabled endpoint is subscribed to (null: every one).
  subscriptions (): Promise<ReadonlyArray<readonly string[] | null>>
  // Takes or renews the lease of every enabled endpoint no other instance holds, until `until`,
  // and answers those `owner` now holds, as they are now (a rotated secret included).
  leaseEndpoints (owner: string, now: number, until: number): Promise<LeasedWebhookEndpoint[]>
  // Extends the leases `owner` holds until `until`, takes no other, and answers the ids of the
  // endpoints whose lease it extended: while a stopping instance's last attempts end, no other
  // instance takes their endpoints over and sends them again.
  extendLeases (owner: string, until: number): Promise<string[]>
  releaseEndpoints (owner: string): Promise<void>
  // Up to `limit` messages of the endpoint due by `now` and placed after `after`, the earliest due
  // first; none for an endpoint that no longer exists. On SQLite this first unpacks the endpoint's
  // bundles, under the write lock.
  dueMessages (endpointId: string, now: number, after: MessagePosition, limit: number): Promise<DueWebhookMessage[]>
  // The endpoint's messages delivered.
  deleteMessages (endpointId: string, seqs: readonly number[]): Promise<void>
  // A failed attempt: the endpoint's message is due again at nextAttemptAt, or failed for good (null).
  rescheduleMessage (endpointId: string, seq: number, attempts: number, nextAttemptAt: number | null): Promise<void>
  // The endpoint's last failure, since when it fails (kept from the first failure on), its
  // failures in a row and its rest.
  recordFailure (endpointId: string, failure: EndpointFailure): Promise<void>
  // A delivery: the endpoint no longer fails, nor rests.
  recordSuccess (endpointId: string): Promise<void>
  disableEndpoint (endpointId: string, at: number, reason: string): Promise<void>
  // Messages waiting for an attempt, over every enabled endpoint (a disabled one is sent nothing more).
  pendingMessages (): Promise<number>
  // Deletes messages, bundled or not, of endpoints that no longer exist, and answers how many:
  // on PostgreSQL all of them, those a statement that began before an endpoint's deletion
  // committed wrote it after; on SQLite, which leaves a deleted endpoint's messages here, one
  // transaction of a few ms (src/store/sqlite/sqlite-webhook-store.ts), so that the caller sweeps
  // until none is found.
  deleteMessagesOfDeletedEndpoints (): Promise<number>
}
