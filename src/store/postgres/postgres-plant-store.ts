import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { parseIntoClientConfig } from 'pg-connection-string'
import { withoutPassword } from '../../config/config.js'
import { canonicalJson } from '../../int64/canonical-json.js'
import { parseJsonExactly } from '../../json/parse-json-exactly.js'
import type { ApiTokenStore } from '../api-token-store.js'
import type { BatchObserver } from '../batch-observer.js'
import { BatchedReads } from '../batched-reads.js'
import { BatchedWrites } from '../batched-writes.js'
import { applyMigrations, type MigrationReport } from '../migration-runner.js'
import type { ActiveWriterCount } from '../group-commit.js'
import { noOutbox, type Outbox } from '../outbox.js'
import type { PlantPage, PlantRow, PlantStore } from '../plant-store.js'
import type { PlantWrite, WriteResults } from '../plant-writes.js'
import type { WebhookStore } from '../webhook-store.js'
import { StoreUnavailableError, translateStoreError } from '../store-errors.js'
import { PostgresApiTokenStore } from './postgres-api-token-store.js'
import { commitWrites, isRefusedByBatchStatement, undefinedTable } from './postgres-batch.js'
import { awaitsNewPrimary, isOutageAtStartUp, isPoolConnectTimeout, isRefusedConnection, isTransientPostgresError } from './postgres-errors.js'
import { PostgresClient } from './postgres-client.js'
import { postgresMigrationConnection } from './postgres-migrations.js'
import { PostgresWebhookStore } from './postgres-webhook-store.js'

export interface PostgresPlantStoreOptions {
  // A postgres:// URL; `?options=-c search_path=<schema>` puts the tables in a schema of their own.
  readonly connectionString: string
  readonly poolSize: number
  // How long a request waits for a connection (a free one in the pool, or a new one) before
  // it gets a 503: an unreachable database must not leave requests hanging.
  readonly connectTimeoutMs?: number
  // The server cancels a statement after this long; the client gives up on a silent
  // connection a little later, in case the server cannot even say so.
  readonly statementTimeoutMs?: number
  // An idle connection that breaks (the server restarted) is dropped and replaced; this is told.
  readonly onIdleConnectionError?: (error: Error) => void
  // After start-up, the server refused a connection (its error says why); the request gets a 503.
  readonly onConnectionRefused?: (error: Error) => void
  // How long a request that reached no primary while one may be on its way (awaitsNewPrimary in
  // postgres-errors.ts) waits for one before its 503: the gap of a planned switchover, so that it
  // costs only the requests in flight at the switch. 0 answers 503 at once.
  readonly failoverWaitMs?: number
  readonly batchObserver?: BatchObserver | undefined
  // The writers whose next writes a batch may wait a moment for (src/store/group-commit.ts).
  readonly activeWriters?: ActiveWriterCount | undefined
}

// The plants of a batch of getPlant reads. Sent unnamed, for the reason selectDocuments in
// postgres-batch.ts is: a plan cached while the table was small would scan it.
const selectDocuments = 'SELECT id::text AS id, document::text AS document FROM plants WHERE id = ANY($1::bigint[])'
// Ordered by the bigint column, not by the text the ids are answered as (ORDER BY id would sort the
// output column: -1 before -9223372036854775808).
const selectFirstPage = 'SELECT id::text AS id, document::text AS document FROM plants ORDER BY plants.id LIMIT $1'
const selectPageAfter = 'SELECT id::text AS id, document::text AS document FROM plants WHERE plants.id > $1::bigint ORDER BY plants.id LIMIT $2'
const selectReadiness = 'SELECT max(version) AS version, pg_is_in_recovery() AS in_recovery FROM schema_migrations'

// Set at the start of every session, after anything the URL asks for, so they always hold:
// a 200 is sent only once the commit is durable, and the insert-or-compare relies on each
// statement seeing what was committed before it began, which stricter isolation levels refuse
// to do (their losing racers would get serialization failures, that is 503s).
const sessionSettings = ['-c synchronous_commit=on', '-c default_transaction_isolation=read\\ committed']
// How often a request waiting for a primary asks again.
const failoverRetryPauseMs = 250
// How long after a request found no primary the pool's own timeout is taken for the same gap.
const recentNoPrimaryMs = 5000

export class PostgresPlantStore implements PlantStore {
  readonly apiTokens: ApiTokenStore
  readonly webhooks: WebhookStore
  readonly description: string
  private outbox: Outbox = noOutbox
  private readonly connection: pg.ClientConfig
  private readonly statementTimeoutMs: number
  private readonly onConnectionRefused: ((error: Error) => void) | undefined
  private readonly failoverWaitMs: number
  // When a request last found no primary; the pool's own timeout within a few seconds of it is
  // the failover's too (its connections are opening through the gap), and any other is overload.
  private lastNoPrimaryAt = Number.NEGATIVE_INFINITY
  private readonly pool: pg.Pool
  private readonly writes: BatchedWrites
  private readonly reads: BatchedReads<bigint, string | undefined>
  private migrated = false
  migrationsAtOpen: MigrationReport | undefined
  private migrationInFlight: Promise<void> | undefined
  private closed = false

  // The store is returned even while the database is unreachable: requests get a 503 and the
  // migrations are tried again by the next request or readiness check, so the service starts
  // in any order with its database and recovers by itself. Any other failure stops start-up (a
  // database that does not exist, a role refused: misconfiguration, not an outage).
  static async open (options: PostgresPlantStoreOptions): Promise<PostgresPlantStore> {
    const store = new PostgresPlantStore(options)
    try {
      // Start-up waits for the migrations however long they take, another instance's included.
      await store.migrateOnce()
    } catch (error) {
      if (!isOutageAtStartUp(error)) {
        await store.close()
        throw error
      }
    }
    return store
  }

  private constructor ({
    connectionString, poolSize, connectTimeoutMs = 2000, statementTimeoutMs = 5000, onIdleConnectionError, onConnectionRefused, failoverWaitMs = 0,
    batchObserver, activeWriters,
  }: PostgresPlantStoreOptions) {
    this.onConnectionRefused = onConnectionRefused
    this.failoverWaitMs = failoverWaitMs
    this.description = `PostgreSQL ${withoutPassword(connectionString)}`
    const fromUrl = parseIntoClientConfig(connectionString)
    this.connection = {
      application_name: 'plant-store',
      ...fromUrl,
      options: [fromUrl.options, ...sessionSettings].filter(Boolean).join(' '),
      connectionTimeoutMillis: connectTimeoutMs,
      keepAlive: true,
    }
    this.statementTimeoutMs = statementTimeoutMs
    this.pool = new pg.Pool({
      ...this.connection,
      Client: PostgresClient,
      max: poolSize,
      statement_timeout: statementTimeoutMs,
      query_timeout: statementTimeoutMs + 1000,
    })
    // Without a listener, an idle connection that breaks would crash the process.
    this.pool.on('error', (error) => onIdleConnectionError?.(error))
    this.writes = new BatchedWrites(
      async (writes) => this.translateErrors(() => this.onMigratedTables(async () => commitWrites(this.pool, writes, this.outbox))),
      isRefusedByBatchStatement,
      () => this.outbox,
      batchObserver,
      activeWriters
    )
    this.apiTokens = new PostgresApiTokenStore(async (query) => this.runQuery(query))
    // The deliveries' own queries never wait for a primary: the dispatcher asks again within 50 ms
    // anyway, and a lease renewed after a wait would be dated from before it.
    this.webhooks = new PostgresWebhookStore(async (query) => this.runQuery(query, 0))
    this.reads = new BatchedReads(async (ids) => {
      const { rows } = await this.runQuery<{ id: string, document: string }>({ text: selectDocuments, values: [ids.map(String)] })
      const documents = new Map(rows.map(({ id, document }) => [id, document]))
      return ids.map((id) => documents.get(id.toString()))
    })
  }

  async write<Write extends PlantWrite> (write: Write): Promise<WriteResults[Write['kind']]> {
    return this.writes.write(write)
  }

  useOutbox (outbox: Outbox): void {
    this.outbox = outbox
  }

  // jsonb keeps a document its own way (its keys by length, spaces after colons): it is answered
  // in the canonical form both backends store and echo.
  async getPlant (id: bigint): Promise<PlantRow | undefined> {
    const document = await this.reads.read(id)
    return document === undefined ? undefined : { id, document: canonicalJson(parseJsonExactly(document)) }
  }

  // A range of the primary key's index, one more than asked for to say whether more follow; the
  // documents are answered in the canonical form, as getPlant answers them.
  async listPlants (after: bigint | undefined, limit: number): Promise<PlantPage> {
    if (this.closed) throw new StoreUnavailableError(1)
    const query = after === undefined
      ? { name: 'select-first-page', text: selectFirstPage, values: [limit + 1] }
      : { name: 'select-page-after', text: selectPageAfter, values: [after.toString(), limit + 1] }
    const { rows } = await this.translateErrors(() => this.onMigratedTables(() =>
      this.pool.query<{ id: string, document: string }>(query)))
    const plants = rows.slice(0, limit).map(({ id, document }) => ({ id: BigInt(id), document: canonicalJson(parseJsonExactly(document)) }))
    return { plants, more: rows.length > limit }
  }

  // Ready means migrated and connected to a server that takes writes (not a standby).
  async checkReady (): Promise<void> {
    // Never waits for a primary: a load balancer asks to know now.
    const { rows } = await this.translateErrors(() => this.onMigratedTables(() =>
      this.pool.query<{ in_recovery: boolean }>({ name: 'select-readiness', text: selectReadiness })), 0)
    if (rows[0]?.in_recovery !== false) throw new StoreUnavailableError(1)
  }

  async close (): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.writes.close()
    await this.pool.end()
  }

  // A query of the token store, run as the plants' own are.
  private async runQuery<Row extends pg.QueryResultRow> (query: pg.QueryConfig, failoverWaitMs = this.failoverWaitMs): Promise<pg.QueryResult<Row>> {
    if (this.closed) throw new StoreUnavailableError(1)
    return this.translateErrors(() => this.onMigratedTables(() => this.pool.query<Row>(query)), failoverWaitMs)
  }

  // Runs the operation once the migrations are applied. When the tables are gone, the database
  // came back empty (recreated without its volume, or restored from nothing): the migrations are
  // applied again and the operation retried once. If a table is still missing (one was dropped
  // by hand, but not its migration record) the error stands.
  private async onMigratedTables<T> (operation: () => Promise<T>): Promise<T> {
    await this.ensureMigrated()
    try {
      return await operation()
    } catch (error) {
      if (!(error instanceof pg.DatabaseError && error.code === undefinedTable)) throw error
      this.migrated = false
      await this.ensureMigrated()
      return await operation()
    }
  }

  // A request waits for a migration in progress (another instance's included) no longer than
  // for a statement; the migration itself goes on, and a later request finds it done.
  private async ensureMigrated (): Promise<void> {
    if (this.migrated) return
    const waited = await Promise.race([
      this.migrateOnce().then(() => 'migrated' as const),
      sleep(this.statementTimeoutMs, 'still migrating' as const, { ref: false }),
    ])
    if (waited === 'still migrating') throw new StoreUnavailableError(1)
  }

  // Concurrent callers share one attempt.
  private async migrateOnce (): Promise<void> {
    this.migrationInFlight ??= this.migrate().finally(() => { this.migrationInFlight = undefined })
    return this.migrationInFlight
  }

  // Migrations run on a connection of their own, outside the pool and free of the statement
  // timeout, so a long migration, or one waiting for another instance's, is not cut short.
  private async migrate (): Promise<void> {
    const client = new PostgresClient(this.connection)
    // A connection lost mid-migration fails the query in progress; without a listener, its
    // error event would also crash the process.
    client.on('error', () => undefined)
    try {
      await client.connect()
      const report = await applyMigrations(postgresMigrationConnection(client))
      this.migrationsAtOpen ??= report
      this.migrated = true
    } finally {
      await client.end().catch(() => undefined)
    }
  }

  // An operation that reached no primary while one may be on its way (awaitsNewPrimary) is run
  // again, every 250 ms, for up to waitMs: nothing of it reached the database, and a failover's new
  // primary takes it as the old one would have. An operation that failed once it reached one (its
  // outcome unknown), or found nothing listening, gets its 503 at once.
  private async translateErrors<T> (operation: () => Promise<T>, waitMs = this.failoverWaitMs): Promise<T> {
    const deadline = Date.now() + waitMs
    for (;;) {
      try {
        return await operation()
      } catch (error) {
        if (isRefusedConnection(error)) this.onConnectionRefused?.(error)
        const now = Date.now()
        const noPrimary = awaitsNewPrimary(error) || (isPoolConnectTimeout(error) && now - this.lastNoPrimaryAt < recentNoPrimaryMs)
        if (noPrimary) this.lastNoPrimaryAt = now
        if (!noPrimary || this.closed || now + failoverRetryPauseMs > deadline) {
          throw translateStoreError(error, isTransientPostgresError)
        }
      }
      await sleep(failoverRetryPauseMs)
    }
  }
}
