import type { Statement } from 'better-sqlite3'
import type { WebhookEndpointSummary } from '../webhook-store.js'
import type { Database } from './sqlite-driver.js'

// A statement run on the request thread's connection, its errors translated for the store.
export type RunStatement = <T>(statement: () => T) => T

// Where the reads that scan the outbox run (src/store/sqlite/background-connection.ts): the rows,
// or undefined when they could not be read there.
export interface BackgroundReads {
  read: <Row>(sql: string) => Promise<Row[] | undefined>
}

interface EndpointRecord {
  id: string
  url: string
  events: string | null
  created_at: bigint
  disabled_at: bigint | null
  disabled_reason: string | null
  last_failure_at: bigint | null
  last_failure_reason: string | null
  pending: bigint
  failed: bigint
}

export const numberOrNull = (value: bigint | null): number | null => value === null ? null : Number(value)

// The endpoints with what each is owed, and what all of them are owed: reads that step through
// every waiting message, about 100 ms for a million, which each scrape of /metrics and each
// listing of the endpoints spent on the request thread while no request was answered. They run
// on the background connection's thread, and on the request thread should that one not answer.
export class SqliteOutboxCounts {
  private readonly selectEndpoints: Statement<[], EndpointRecord>
  private readonly countPending: Statement<[], { count: bigint }>
  private countUnderWay: Promise<number> | undefined

  constructor (database: Database, private readonly run: RunStatement, private readonly background: BackgroundReads) {
    this.selectEndpoints = database.prepare(`SELECT e.id, e.url, e.events, e.created_at, e.disabled_at, e.disabled_reason,
        e.last_failure_at, e.last_failure_reason,
        (SELECT count(*) FROM webhook_messages m WHERE m.endpoint_id = e.id AND m.next_attempt_at IS NOT NULL)
          + (SELECT coalesce(sum(b.message_count), 0) FROM webhook_message_bundles b WHERE b.endpoint_id = e.id) AS pending,
        (SELECT count(*) FROM webhook_messages m WHERE m.endpoint_id = e.id AND m.next_attempt_at IS NULL) AS failed
      FROM webhook_endpoints e ORDER BY e.created_at, e.id`)
    // Only what an endpoint is owed, as on PostgreSQL (src/store/postgres/postgres-webhook-store.ts).
    this.countPending = database.prepare(`SELECT (SELECT count(*) FROM webhook_messages m WHERE m.next_attempt_at IS NOT NULL
          AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = m.endpoint_id))
      + (SELECT coalesce(sum(b.message_count), 0) FROM webhook_message_bundles b
          WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = b.endpoint_id)) AS count`)
  }

  async endpoints (): Promise<WebhookEndpointSummary[]> {
    return (await this.read(this.selectEndpoints)).map((record) => ({
      id: record.id,
      url: record.url,
      events: record.events === null ? null : JSON.parse(record.events) as string[],
      createdAt: Number(record.created_at),
      disabledAt: numberOrNull(record.disabled_at),
      disabledReason: record.disabled_reason,
      lastFailureAt: numberOrNull(record.last_failure_at),
      lastFailureReason: record.last_failure_reason,
      pendingMessages: Number(record.pending),
      failedMessages: Number(record.failed),
    }))
  }

  // Scrapes of /metrics that come while a count runs share it: one count at a time, however
  // often the metrics are asked for.
  async pendingMessages (): Promise<number> {
    this.countUnderWay ??= this.read(this.countPending)
      .then((rows) => Number(rows[0]?.count ?? 0))
      .finally(() => { this.countUnderWay = undefined })
    return this.countUnderWay
  }

  private async read<Row> (statement: Statement<[], Row>): Promise<Row[]> {
    return await this.background.read<Row>(statement.source) ?? this.run(() => statement.all())
  }
}
