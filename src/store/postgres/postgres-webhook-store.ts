import type {
  DueWebhookMessage, EndpointFailure, LeasedWebhookEndpoint, MessagePosition, NewWebhookEndpointRow, WebhookEndpointSummary, WebhookStore,
} from '../webhook-store.js'
import {
  countPendingMessages, dueMessageOf, type EndpointRecord, endpointSummaryOf, type LeaseRecord, leasedColumns, leasedEndpointOf, messageColumns,
  type MessageRecord, selectEndpointsWithCounts,
} from '../webhook-records.js'
import type { RunPostgresQuery } from './postgres-api-token-store.js'
import { unpackBundles } from './postgres-outbox-writes.js'

// bigint columns come back as decimal text; every count here is well inside 2^53.
type Bigint = string

// One statement, so that two instances renewing at once cannot both take an endpoint: the row
// lock makes the second re-check the condition against the first's lease.
const leaseEndpoints = `UPDATE webhook_endpoints SET lease_owner = $1, lease_until = $2
  WHERE disabled_at IS NULL AND (lease_owner = $1 OR lease_until IS NULL OR lease_until < $3)
  RETURNING ${leasedColumns}`
const selectDue = `SELECT ${messageColumns}
  FROM webhook_messages WHERE endpoint_id = $1 AND next_attempt_at <= $2 AND (next_attempt_at, seq) > ($3, $4)
  ORDER BY next_attempt_at, seq LIMIT $5`
// The endpoint's messages, bundled or not, go with it, in the same statement.
const deleteEndpoint = `WITH messages AS (DELETE FROM webhook_messages WHERE endpoint_id = $1),
  bundles AS (DELETE FROM webhook_message_bundles WHERE endpoint_id = $1)
  DELETE FROM webhook_endpoints WHERE id = $1 RETURNING id`
// A statement or transaction that overlapped an endpoint's deletion as it committed read the
// endpoint in its own snapshot (READ COMMITTED) and may write it messages after the deletion:
// a batch of creates' bundles, a batch with deletes' messages, an unpack of the endpoint's
// bundles. Those rows are owed to no one, and are deleted here, in one statement. The endpoints
// owed anything are found by skipping through each table's index on endpoint_id, one descent per
// endpoint however many rows wait.
const deleteMessagesOfDeletedEndpoints = `WITH RECURSIVE message_owners (endpoint_id) AS (
  (SELECT endpoint_id FROM webhook_messages ORDER BY endpoint_id LIMIT 1)
  UNION ALL
  SELECT (SELECT m.endpoint_id FROM webhook_messages m WHERE m.endpoint_id > o.endpoint_id ORDER BY m.endpoint_id LIMIT 1)
  FROM message_owners o WHERE o.endpoint_id IS NOT NULL
), bundle_owners (endpoint_id) AS (
  (SELECT endpoint_id FROM webhook_message_bundles ORDER BY endpoint_id LIMIT 1)
  UNION ALL
  SELECT (SELECT b.endpoint_id FROM webhook_message_bundles b WHERE b.endpoint_id > o.endpoint_id ORDER BY b.endpoint_id LIMIT 1)
  FROM bundle_owners o WHERE o.endpoint_id IS NOT NULL
), deleted_owners AS (
  SELECT endpoint_id FROM message_owners WHERE endpoint_id IS NOT NULL
  UNION SELECT endpoint_id FROM bundle_owners WHERE endpoint_id IS NOT NULL
  EXCEPT SELECT id FROM webhook_endpoints
), messages AS (
  DELETE FROM webhook_messages WHERE endpoint_id IN (SELECT endpoint_id FROM deleted_owners) RETURNING 1
), bundles AS (
  DELETE FROM webhook_message_bundles WHERE endpoint_id IN (SELECT endpoint_id FROM deleted_owners) RETURNING message_count
)
SELECT (SELECT count(*) FROM messages) + (SELECT coalesce(sum(message_count), 0) FROM bundles) AS count`

// The endpoints and their outbox in PostgreSQL; every statement runs in autocommit on the pool.
export class PostgresWebhookStore implements WebhookStore {
  constructor (private readonly runQuery: RunPostgresQuery) {}

  async createEndpoint ({ id, url, events, secret, createdAt }: NewWebhookEndpointRow): Promise<void> {
    await this.runQuery({
      text: 'INSERT INTO webhook_endpoints (id, url, events, secret, created_at) VALUES ($1, $2, $3, $4, $5)',
      values: [id, url, events, secret, createdAt],
    })
  }

  async listEndpoints (): Promise<WebhookEndpointSummary[]> {
    const { rows } = await this.runQuery<EndpointRecord>({ text: selectEndpointsWithCounts })
    return rows.map(endpointSummaryOf)
  }

  async deleteEndpoint (id: string): Promise<boolean> {
    const { rowCount } = await this.runQuery({ text: deleteEndpoint, values: [id] })
    return rowCount === 1
  }

  async rotateSecret (id: string, secret: string, previousSecretUntil: number): Promise<boolean> {
    const { rowCount } = await this.runQuery({
      text: 'UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_until = $1, secret = $2 WHERE id = $3',
      values: [previousSecretUntil, secret, id],
    })
    return rowCount === 1
  }

  async subscriptions (): Promise<ReadonlyArray<readonly string[] | null>> {
    const { rows } = await this.runQuery<{ events: string[] | null }>({
      name: 'select-webhook-subscriptions',
      text: 'SELECT events FROM webhook_endpoints WHERE disabled_at IS NULL',
    })
    return rows.map(({ events }) => events)
  }

  async leaseEndpoints (owner: string, now: number, until: number): Promise<LeasedWebhookEndpoint[]> {
    const { rows } = await this.runQuery<LeaseRecord>({ text: leaseEndpoints, values: [owner, until, now] })
    return rows.map(leasedEndpointOf)
  }

  async extendLeases (owner: string, until: number): Promise<string[]> {
    const { rows } = await this.runQuery<{ id: string }>({ text: 'UPDATE webhook_endpoints SET lease_until = $2 WHERE lease_owner = $1 RETURNING id', values: [owner, until] })
    return rows.map(({ id }) => id)
  }

  async releaseEndpoints (owner: string): Promise<void> {
    await this.runQuery({ text: 'UPDATE webhook_endpoints SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1', values: [owner] })
  }

  // The endpoint's bundles are unpacked first (src/store/postgres/postgres-outbox-writes.ts),
  // as many as the read may return.
  async dueMessages (endpointId: string, now: number, after: MessagePosition, limit: number): Promise<DueWebhookMessage[]> {
    try {
      await unpackBundles(this.runQuery, endpointId, limit)
    } catch {
      // Unpacked on a later read: what is unpacked already is read now (and a store that cannot
      // be reached fails the read below). A bundle that could never be unpacked stays counted.
    }
    const { rows } = await this.runQuery<MessageRecord>({
      name: 'select-due-webhook-messages', text: selectDue, values: [endpointId, now, after.nextAttemptAt, after.seq, limit],
    })
    return rows.map(dueMessageOf)
  }

  // By the endpoint too, as on SQLite (whose seqs may be reused); here they never are.
  async deleteMessages (endpointId: string, seqs: readonly number[]): Promise<void> {
    if (seqs.length === 0) return
    await this.runQuery({
      name: 'delete-webhook-messages', text: 'DELETE FROM webhook_messages WHERE seq = ANY($1::bigint[]) AND endpoint_id = $2', values: [seqs, endpointId],
    })
  }

  async rescheduleMessage (endpointId: string, seq: number, attempts: number, nextAttemptAt: number | null): Promise<void> {
    await this.runQuery({
      text: 'UPDATE webhook_messages SET attempts = $1, next_attempt_at = $2 WHERE seq = $3 AND endpoint_id = $4', values: [attempts, nextAttemptAt, seq, endpointId],
    })
  }

  async recordFailure (endpointId: string, { at, reason, failuresInARow, restingUntil }: EndpointFailure): Promise<void> {
    await this.runQuery({
      text: `UPDATE webhook_endpoints SET last_failure_at = $1, last_failure_reason = $2,
               failing_since = coalesce(failing_since, $1), failures_in_a_row = $3, resting_until = $4, rest_recorded_at = $1 WHERE id = $5`,
      values: [at, reason, failuresInARow, restingUntil, endpointId],
    })
  }

  async recordSuccess (endpointId: string): Promise<void> {
    await this.runQuery({
      text: `UPDATE webhook_endpoints SET failing_since = NULL, failures_in_a_row = 0, resting_until = NULL, rest_recorded_at = NULL
               WHERE id = $1 AND failing_since IS NOT NULL`,
      values: [endpointId],
    })
  }

  async disableEndpoint (endpointId: string, at: number, reason: string): Promise<void> {
    await this.runQuery({
      text: 'UPDATE webhook_endpoints SET disabled_at = $1, disabled_reason = $2, lease_owner = NULL, lease_until = NULL WHERE id = $3',
      values: [at, reason, endpointId],
    })
  }

  async pendingMessages (): Promise<number> {
    const { rows } = await this.runQuery<{ count: Bigint }>({ text: countPendingMessages })
    return Number(rows[0]?.count ?? 0)
  }

  async deleteMessagesOfDeletedEndpoints (): Promise<number> {
    const { rows } = await this.runQuery<{ count: Bigint }>({ name: 'delete-messages-of-deleted-endpoints', text: deleteMessagesOfDeletedEndpoints })
    return Number(rows[0]?.count ?? 0)
  }
}
