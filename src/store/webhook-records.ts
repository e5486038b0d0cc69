import type { DueWebhookMessage, LeasedWebhookEndpoint, WebhookEndpointSummary } from './webhook-store.js'

// The rows of the webhooks' tables as both backends read them, and the statements they share.

// An integer column as a backend reads it: bigint (SQLite) or decimal text (PostgreSQL); every
// time and count here is well inside 2^53 (a plant's id is read as a bigint).
export type IntegerColumn = bigint | string

export const numberOrNull = (value: IntegerColumn | null): number | null => value === null ? null : Number(value)

// An endpoint's row as the backends' listings select it, its events already a list.
export interface EndpointRecord {
  id: string
  url: string
  events: string[] | null
  created_at: IntegerColumn
  disabled_at: IntegerColumn | null
  disabled_reason: string | null
  last_failure_at: IntegerColumn | null
  last_failure_reason: string | null
  pending: IntegerColumn
  failed: IntegerColumn
}

// Every endpoint, oldest first, with the messages it is owed (rows waiting for an attempt, and
// those still bundled) and those that failed every attempt: the same statement on both backends.
export const selectEndpointsWithCounts = `SELECT e.id, e.url, e.events, e.created_at, e.disabled_at, e.disabled_reason,
    e.last_failure_at, e.last_failure_reason,
    (SELECT count(*) FROM webhook_messages m WHERE m.endpoint_id = e.id AND m.next_attempt_at IS NOT NULL)
      + (SELECT coalesce(sum(b.message_count), 0) FROM webhook_message_bundles b WHERE b.endpoint_id = e.id) AS pending,
    (SELECT count(*) FROM webhook_messages m WHERE m.endpoint_id = e.id AND m.next_attempt_at IS NULL) AS failed
  FROM webhook_endpoints e ORDER BY e.created_at, e.id`

// The messages waiting, over every endpoint: only what an enabled endpoint is owed. Rows left by a
// deleted endpoint wait for no one but the sweep, and a disabled endpoint is sent nothing more.
export const countPendingMessages = `SELECT (SELECT count(*) FROM webhook_messages m WHERE m.next_attempt_at IS NOT NULL
      AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = m.endpoint_id AND e.disabled_at IS NULL))
  + (SELECT coalesce(sum(b.message_count), 0) FROM webhook_message_bundles b
      WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = b.endpoint_id AND e.disabled_at IS NULL)) AS count`

// A disabled endpoint is sent nothing more, and none is enabled again (its URL is registered
// anew): what it was still owed will never be delivered, so it is counted as failed, not pending.
export function endpointSummaryOf (record: EndpointRecord): WebhookEndpointSummary {
  const disabled = record.disabled_at !== null
  return {
    id: record.id,
    url: record.url,
    events: record.events,
    createdAt: Number(record.created_at),
    disabledAt: numberOrNull(record.disabled_at),
    disabledReason: record.disabled_reason,
    lastFailureAt: numberOrNull(record.last_failure_at),
    lastFailureReason: record.last_failure_reason,
    pendingMessages: disabled ? 0 : Number(record.pending),
    failedMessages: Number(record.failed) + (disabled ? Number(record.pending) : 0),
  }
}

// The rest of a leased endpoint, as both backends' leases return it: only while the failure that
// recorded it is still the endpoint's last, and the endpoint still fails. A release before the
// rest was stored (schema version 8) records a delivery by clearing failing_since alone, and a
// failure by its time alone; after either, the count and rest left are stale.
const restIsCurrent = 'failing_since IS NOT NULL AND rest_recorded_at = last_failure_at'
const restOfLeased = `CASE WHEN ${restIsCurrent} THEN failures_in_a_row ELSE 0 END AS failures_in_a_row,
  CASE WHEN ${restIsCurrent} THEN resting_until END AS resting_until`

// What both backends' leases return of each endpoint leased (RETURNING ${leasedColumns}).
export const leasedColumns = `id, url, secret, previous_secret, previous_secret_until, failing_since, ${restOfLeased}`

export interface LeaseRecord {
  id: string
  url: string
  secret: string
  previous_secret: string | null
  previous_secret_until: IntegerColumn | null
  failing_since: IntegerColumn | null
  // integer on PostgreSQL, which reads it as a number
  failures_in_a_row: IntegerColumn | number
  resting_until: IntegerColumn | null
}

export function leasedEndpointOf (record: LeaseRecord): LeasedWebhookEndpoint {
  return {
    id: record.id,
    url: record.url,
    secret: record.secret,
    previousSecret: record.previous_secret,
    previousSecretUntil: numberOrNull(record.previous_secret_until),
    failingSince: numberOrNull(record.failing_since),
    failuresInARow: Number(record.failures_in_a_row),
    restingUntil: numberOrNull(record.resting_until),
  }
}

// What both backends select of a due message (SELECT ${messageColumns}).
export const messageColumns = 'seq, message_id, event, plant_id, document, traceparent, committed_at, attempts, next_attempt_at'

export interface MessageRecord {
  seq: IntegerColumn
  message_id: string
  event: string
  plant_id: IntegerColumn
  document: string
  traceparent: string | null
  committed_at: IntegerColumn
  // integer on PostgreSQL, which reads it as a number
  attempts: IntegerColumn | number
  next_attempt_at: IntegerColumn
}

export function dueMessageOf (record: MessageRecord): DueWebhookMessage {
  return {
    seq: Number(record.seq),
    messageId: record.message_id,
    event: record.event,
    plant: { id: BigInt(record.plant_id), document: record.document },
    traceparent: record.traceparent,
    committedAt: Number(record.committed_at),
    attempts: Number(record.attempts),
    nextAttemptAt: Number(record.next_attempt_at),
  }
}
