import type {
  DueWebhookMessage, EndpointFailure, LeasedWebhookEndpoint, MessagePosition, NewWebhookEndpointRow, WebhookEndpointSummary, WebhookStore,
} from '../webhook-store.js'
import type { Transaction } from 'better-sqlite3'
import type { MessageBundles } from './message-bundles.js'
import { commitWithoutFsync } from './commit-without-fsync.js'
import type { Database } from './sqlite-driver.js'
import { dueMessageOf, type LeaseRecord, leasedColumns, leasedEndpointOf, messageColumns, type MessageRecord } from '../webhook-records.js'
import { type BackgroundReads, type RunStatement, SqliteOutboxCounts } from './sqlite-outbox-counts.js'

// Where a read of what is due starts: after the message at (afterAt, afterSeq).
interface DuePosition {
  endpointId: string
  now: bigint
  afterAt: number
  afterSeq: number
  limit: number
}

// A step of the sweep is one transaction on the request thread: slices of rows, then bundles
// (each counted as its messages, deleted whole), until `messages` are reached or the first slice
// or bundle past `budgetMs`. The cap ends a step on a fast machine, the clock on a slow one, whose
// requests would otherwise wait several times as long (benchmark.md). Tests set their own.
export interface SweepStep {
  readonly messages: number
  readonly budgetMs: number
}

const defaultSweepStep: SweepStep = { messages: 2000, budgetMs: 5 }
const messagesDeletedInASlice = 250

// The endpoints and their outbox in the SQLite file; each statement runs in autocommit, as the
// token store's do. Several processes on one file share the endpoints' leases through it.
export class SqliteWebhookStore implements WebhookStore {
  private readonly statements
  private readonly counts: SqliteOutboxCounts

  constructor (
    private readonly database: Database,
    private readonly bundles: MessageBundles,
    private readonly run: RunStatement,
    background: BackgroundReads,
    step: SweepStep = defaultSweepStep
  ) {
    this.counts = new SqliteOutboxCounts(database, run, background)
    this.statements = {
      insertEndpoint: database.prepare('INSERT INTO webhook_endpoints (id, url, events, secret, created_at) VALUES (?, ?, ?, ?, ?)'),
      deleteEndpoint: database.prepare('DELETE FROM webhook_endpoints WHERE id = ?'),
      endpointExists: database.prepare<[string], unknown>('SELECT 1 FROM webhook_endpoints WHERE id = ?').pluck(),
      deleteSomeEndpointMessages: database.prepare<[string, number]>(`DELETE FROM webhook_messages
        WHERE seq IN (SELECT seq FROM webhook_messages WHERE endpoint_id = ? LIMIT ?)`),
      selectOneEndpointBundle: database.prepare<[string], { seq: bigint, message_count: bigint }>(
        'SELECT seq, message_count FROM webhook_message_bundles WHERE endpoint_id = ? LIMIT 1'),
      deleteBundle: database.prepare('DELETE FROM webhook_message_bundles WHERE seq = ?'),
      rotateSecret: database.prepare(`UPDATE webhook_endpoints
        SET previous_secret = secret, previous_secret_until = ?, secret = ? WHERE id = ?`),
      selectSubscriptions: database.prepare<[], string | null>('SELECT events FROM webhook_endpoints WHERE disabled_at IS NULL').pluck(),
      lease: database.prepare<[string, bigint, string, bigint], LeaseRecord>(`UPDATE webhook_endpoints SET lease_owner = ?, lease_until = ?
        WHERE disabled_at IS NULL AND (lease_owner = ? OR lease_until IS NULL OR lease_until < ?)
        RETURNING ${leasedColumns}`),
      extendLeases: database.prepare<[bigint, string], { id: string }>('UPDATE webhook_endpoints SET lease_until = ? WHERE lease_owner = ? RETURNING id'),
      release: database.prepare('UPDATE webhook_endpoints SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ?'),
      // The messages after a position, as two index seeks merged: the rest of the position's
      // moment (all of a bundle's messages share one), then the later ones. With the row value
      // `(next_attempt_at, seq) > (?, ?)` SQLite seeks to the moment alone and steps over every
      // message of it before the position: 14 ms a read 100,000 messages in, against 0.2.
      selectDue: database.prepare<[DuePosition], MessageRecord>(`SELECT ${messageColumns}
        FROM webhook_messages WHERE endpoint_id = @endpointId AND next_attempt_at = @afterAt AND seq > @afterSeq AND next_attempt_at <= @now
        UNION ALL
        SELECT ${messageColumns}
        FROM webhook_messages WHERE endpoint_id = @endpointId AND next_attempt_at > @afterAt AND next_attempt_at <= @now
        ORDER BY next_attempt_at, seq LIMIT @limit`),
      // By the endpoint too: a deleted endpoint's rows, swept, free their seqs for others (a rowid
      // is reused once the highest are gone), and a delivery still under way may settle its own.
      deleteMessage: database.prepare('DELETE FROM webhook_messages WHERE seq = ? AND endpoint_id = ?'),
      reschedule: database.prepare('UPDATE webhook_messages SET attempts = ?, next_attempt_at = ? WHERE seq = ? AND endpoint_id = ?'),
      recordFailure: database.prepare(`UPDATE webhook_endpoints
        SET last_failure_at = @at, last_failure_reason = @reason, failing_since = coalesce(failing_since, @at),
          failures_in_a_row = @failuresInARow, resting_until = @restingUntil, rest_recorded_at = @at WHERE id = @endpointId`),
      recordSuccess: database.prepare(`UPDATE webhook_endpoints SET failing_since = NULL, failures_in_a_row = 0, resting_until = NULL, rest_recorded_at = NULL
        WHERE id = ? AND failing_since IS NOT NULL`),
      disable: database.prepare('UPDATE webhook_endpoints SET disabled_at = ?, disabled_reason = ?, lease_owner = NULL, lease_until = NULL WHERE id = ?'),
      // The ids of deleted endpoints still owed rows, found by skipping through each table's index
      // on endpoint_id: one descent per endpoint, however many rows wait.
      selectDeletedEndpointsOwed: database.prepare<[], string>(`WITH RECURSIVE message_owners (endpoint_id) AS (
          SELECT (SELECT endpoint_id FROM webhook_messages ORDER BY endpoint_id LIMIT 1)
          UNION ALL
          SELECT (SELECT m.endpoint_id FROM webhook_messages m WHERE m.endpoint_id > o.endpoint_id ORDER BY m.endpoint_id LIMIT 1)
          FROM message_owners o WHERE o.endpoint_id IS NOT NULL
        ), bundle_owners (endpoint_id) AS (
          SELECT (SELECT endpoint_id FROM webhook_message_bundles ORDER BY endpoint_id LIMIT 1)
          UNION ALL
          SELECT (SELECT b.endpoint_id FROM webhook_message_bundles b WHERE b.endpoint_id > o.endpoint_id ORDER BY b.endpoint_id LIMIT 1)
          FROM bundle_owners o WHERE o.endpoint_id IS NOT NULL
        )
        SELECT endpoint_id FROM message_owners WHERE endpoint_id IS NOT NULL
        UNION SELECT endpoint_id FROM bundle_owners WHERE endpoint_id IS NOT NULL
        EXCEPT SELECT id FROM webhook_endpoints`).pluck(),
    }
    const { deleteSomeEndpointMessages, selectOneEndpointBundle, deleteBundle, deleteMessage } = this.statements
    this.deleteDelivered = database.transaction((endpointId: string, seqs: readonly number[]) => {
      for (const seq of seqs) deleteMessage.run(seq, endpointId)
    })
    // Rows first, then bundles, each endpoint in turn, until the step's messages or time are
    // spent; one slice (or one bundle, whatever it holds) at least. Answers how many messages.
    // The endpoints are those the sweep found before it asked for the write lock: one found gone
    // meanwhile deletes nothing, one deleted meanwhile waits for the next sweep.
    this.deleteSomeOfDeletedEndpoints = database.transaction((owed: readonly string[]) => {
      const startedAt = performance.now()
      let deleted = 0
      const stepLeft = (): boolean => deleted < step.messages && (deleted === 0 || performance.now() - startedAt < step.budgetMs)
      for (const endpointId of owed) {
        let rowsLeft = true
        while (rowsLeft && stepLeft()) {
          const wanted = Math.min(messagesDeletedInASlice, step.messages - deleted)
          const rows = deleteSomeEndpointMessages.run(endpointId, wanted).changes
          deleted += rows
          rowsLeft = rows === wanted
        }
        // Rows left mean the step is spent.
        if (rowsLeft) break
        while (stepLeft()) {
          const bundle = selectOneEndpointBundle.get(endpointId)
          if (bundle === undefined) break
          deleteBundle.run(bundle.seq)
          deleted += Math.max(1, Number(bundle.message_count))
        }
        if (!stepLeft()) break
      }
      return deleted
    })
  }

  private readonly deleteDelivered: (endpointId: string, seqs: readonly number[]) => void
  private readonly deleteSomeOfDeletedEndpoints: Transaction<(owed: readonly string[]) => number>

  async createEndpoint ({ id, url, events, secret, createdAt }: NewWebhookEndpointRow): Promise<void> {
    this.run(() => this.statements.insertEndpoint.run(id, url, events === null ? null : JSON.stringify(events), secret, createdAt))
  }

  async listEndpoints (): Promise<WebhookEndpointSummary[]> {
    return this.counts.endpoints()
  }

  // The endpoint alone: its messages, owed to no one from now on, are left to the sweep, a few
  // ms' worth at a time (deleteMessagesOfDeletedEndpoints). Deleted with it, in one transaction, a
  // million of them held every request for over a second.
  async deleteEndpoint (id: string): Promise<boolean> {
    return this.run(() => this.statements.deleteEndpoint.run(id).changes === 1)
  }

  async rotateSecret (id: string, secret: string, previousSecretUntil: number): Promise<boolean> {
    return this.run(() => this.statements.rotateSecret.run(previousSecretUntil, secret, id).changes === 1)
  }

  async subscriptions (): Promise<ReadonlyArray<readonly string[] | null>> {
    return this.run(() => this.statements.selectSubscriptions.all())
      .map((events) => events === null ? null : JSON.parse(events) as string[])
  }

  async leaseEndpoints (owner: string, now: number, until: number): Promise<LeasedWebhookEndpoint[]> {
    return this.run(() => this.statements.lease.all(owner, BigInt(until), owner, BigInt(now))).map(leasedEndpointOf)
  }

  async extendLeases (owner: string, until: number): Promise<string[]> {
    return this.run(() => this.statements.extendLeases.all(BigInt(until), owner)).map(({ id }) => id)
  }

  async releaseEndpoints (owner: string): Promise<void> {
    this.run(() => this.statements.release.run(owner))
  }

  // The endpoint's bundles are unpacked first (src/store/sqlite/message-bundles.ts), as many
  // messages as are asked for at least.
  async dueMessages (endpointId: string, now: number, after: MessagePosition, limit: number): Promise<DueWebhookMessage[]> {
    // A deleted endpoint's messages wait for the sweep; its delivery lasts until its lease is renewed.
    if (this.run(() => this.statements.endpointExists.get(endpointId)) === undefined) return []
    try {
      this.run(() => { this.bundles.unpack(endpointId, limit) })
    } catch {
      // Unpacked on a later read (another process holding the write lock, say): what is
      // unpacked already is read now. A bundle that could never be unpacked stays counted.
    }
    return this.run(() => this.statements.selectDue.all({ endpointId, now: BigInt(now), afterAt: after.nextAttemptAt, afterSeq: after.seq, limit })).map(dueMessageOf)
  }

  async deleteMessages (endpointId: string, seqs: readonly number[]): Promise<void> {
    if (seqs.length > 0) this.run(() => this.deleteDelivered(endpointId, seqs))
  }

  async rescheduleMessage (endpointId: string, seq: number, attempts: number, nextAttemptAt: number | null): Promise<void> {
    this.run(() => this.statements.reschedule.run(attempts, nextAttemptAt, seq, endpointId))
  }

  async recordFailure (endpointId: string, failure: EndpointFailure): Promise<void> {
    this.run(() => this.statements.recordFailure.run({ ...failure, endpointId }))
  }

  async recordSuccess (endpointId: string): Promise<void> {
    this.run(() => this.statements.recordSuccess.run(endpointId))
  }

  async disableEndpoint (endpointId: string, at: number, reason: string): Promise<void> {
    this.run(() => this.statements.disable.run(at, reason, endpointId))
  }

  async pendingMessages (): Promise<number> {
    return this.counts.pendingMessages()
  }

  // One step of the sweep (deleteSomeOfDeletedEndpoints), committed without waiting for the
  // disk (a power cut that undoes it leaves rows the next sweep deletes); the write lock is asked
  // for only when there is something to delete.
  async deleteMessagesOfDeletedEndpoints (): Promise<number> {
    const owed = this.run(() => this.statements.selectDeletedEndpointsOwed.all())
    if (owed.length === 0) return 0
    return this.run(() => commitWithoutFsync(this.database, () => this.deleteSomeOfDeletedEndpoints.immediate(owed)))
  }
}
