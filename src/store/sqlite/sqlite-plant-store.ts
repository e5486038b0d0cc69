import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { unreachable } from '../../errors/unreachable.js'
import { isSameJson } from '../../int64/canonical-json.js'
import type { ApiTokenStore } from '../api-token-store.js'
import type { BatchObserver } from '../batch-observer.js'
import { BatchedReads } from '../batched-reads.js'
import { BatchedWrites } from '../batched-writes.js'
import { applyMigrations, type MigrationReport } from '../migration-runner.js'
import type { ActiveWriterCount } from '../group-commit.js'
import { noOutbox, type Outbox } from '../outbox.js'
import type { PlantPage, PlantRow, PlantStore } from '../plant-store.js'
import { changeOfWrite, compareWithStored, type PlantChange, type PlantWrite, type StoredPlantCondition, type WriteContext, type WriteResult, type WriteResults } from '../plant-writes.js'
import type { WebhookStore } from '../webhook-store.js'
import { StoreUnavailableError, translateStoreError } from '../store-errors.js'
import { type BatchChanges, MessageBundles } from './message-bundles.js'
import { SqliteApiTokenStore } from './sqlite-api-token-store.js'
import { Database, SqliteError } from './sqlite-driver.js'
import { sqliteMigrationConnection } from './sqlite-migrations.js'
import { SqliteWebhookStore, type SweepStep } from './sqlite-webhook-store.js'
import { BackgroundConnection } from './background-connection.js'

export interface SqlitePlantStoreOptions {
  readonly filename: string
  // How long a write waits for another connection's lock before the request gets a 503. The
  // wait blocks the event loop (SQLite sleeps in the calling thread), so it is kept short.
  readonly busyTimeoutMs?: number
  readonly batchObserver?: BatchObserver | undefined
  // The writers whose next writes a batch may wait a moment for (src/store/group-commit.ts).
  readonly activeWriters?: ActiveWriterCount | undefined
  // Told when the background connection's thread fails (checkpoints, and counts of the outbox).
  readonly onBackgroundFailure?: (error: unknown) => void
  // How much a step of the sweep of deleted endpoints' messages deletes (tests set their own).
  readonly sweepStep?: SweepStep | undefined
}

// The log is checkpointed by a thread of its own every 100 ms (src/store/sqlite/background-connection.ts).
// Should that thread fall behind (or fail), a commit that takes the log past 16,000 pages
// (64 MiB) checkpoints it as SQLite does by default, so the log stays bounded.
const checkpointEveryMs = 100
const safetyNetCheckpointPages = 16_000
// What the background connection's failure leaves, for the operator who reads of it.
export const backgroundFailureConsequence = `commits now checkpoint the log themselves (past ${safetyNetCheckpointPages.toLocaleString('en-US')} pages), and the outbox is counted on the request thread`

// Failures that say "not now" rather than "never": the request may be retried.
const transientErrorCodes = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|PROTOCOL)/
const isTransientSqliteError = (error: unknown): boolean =>
  error instanceof SqliteError && transientErrorCodes.test(error.code)

// The file (and its folder) created if need be, configured and migrated; closed again if any
// of that fails, so a store that cannot start leaves no handle open.
async function openDatabase (filename: string, busyTimeoutMs: number): Promise<{ database: Database, migrations: MigrationReport }> {
  mkdirSync(dirname(filename), { recursive: true })
  const database = new Database(filename, { timeout: busyTimeoutMs })
  try {
    // WAL with synchronous=FULL fsyncs the log on every commit, so an acknowledged create
    // survives a process crash and a power loss.
    database.pragma('journal_mode = WAL')
    database.pragma('synchronous = FULL')
    database.defaultSafeIntegers(true)
    const migrations = await applyMigrations(sqliteMigrationConnection(database))
    return { database, migrations }
  } catch (error) {
    database.close()
    throw error
  }
}

// A write that may carry a condition on the stored plant.
interface ConditionalWrite {
  readonly id: bigint
  readonly condition?: StoredPlantCondition | undefined
}

export class SqlitePlantStore implements PlantStore {
  readonly apiTokens: ApiTokenStore
  readonly webhooks: WebhookStore
  readonly description: string
  private outbox: Outbox = noOutbox
  private readonly writes: BatchedWrites
  private readonly readMigrationVersion: () => unknown
  private readonly reads: BatchedReads<bigint, string | undefined>
  private readonly readPage: (after: bigint | undefined, count: number) => PlantRow[]

  static async open (options: SqlitePlantStoreOptions): Promise<SqlitePlantStore> {
    const { filename, busyTimeoutMs = 250, onBackgroundFailure } = options
    const { database, migrations } = await openDatabase(filename, busyTimeoutMs)
    database.pragma(`wal_autocheckpoint = ${safetyNetCheckpointPages}`)
    const background = BackgroundConnection.start(filename, checkpointEveryMs, onBackgroundFailure)
    return new SqlitePlantStore(database, background, migrations, options)
  }

  private constructor (
    private readonly database: Database,
    private readonly background: BackgroundConnection,
    readonly migrationsAtOpen: MigrationReport,
    { filename, batchObserver, activeWriters, sweepStep }: SqlitePlantStoreOptions
  ) {
    this.description = `SQLite file ${filename}`
    const insert = database.prepare('INSERT INTO plants (id, document) VALUES (?, ?) ON CONFLICT (id) DO NOTHING')
    const replace = database.prepare<[string, bigint]>('UPDATE plants SET document = ? WHERE id = ?')
    const remove = database.prepare<[bigint], string>('DELETE FROM plants WHERE id = ? RETURNING document').pluck()
    // The webhooks' messages of the batch's changes, written as bundles at its end.
    const bundles = new MessageBundles(database)
    const recordChange = (batch: BatchChanges, change: PlantChange, plant: PlantRow, context: WriteContext | undefined): void => {
      if (this.outbox.wants(change)) bundles.add(batch, change, plant, context?.traceparent)
    }
    const selectDocument = database.prepare<[bigint], string>('SELECT document FROM plants WHERE id = ?').pluck()
    // The id is the table's rowid: a page is a range of its B-tree, found without a scan.
    const selectFirstPage = database.prepare<[number], PlantRow>('SELECT id, document FROM plants ORDER BY id LIMIT ?')
    const selectPageAfter = database.prepare<[bigint, number], PlantRow>('SELECT id, document FROM plants WHERE id > ? ORDER BY id LIMIT ?')
    // Each write runs in arrival order, so a later write of an id sees what an earlier one in the
    // same batch left; a create inserts first and compares only when the id was taken; a write
    // with a condition reads the stored plant first, under the batch's write lock. The whole
    // batch is one IMMEDIATE transaction (one fsync): no other writer can slip in between, in
    // this process or another on the same file, and a failure leaves none of it written.
    // The webhooks' messages of a change are written with it, in the batch's transaction.
    const refusedByCondition = ({ id, condition }: ConditionalWrite): 'absent' | 'condition-failed' | undefined => {
      if (condition === undefined) return undefined
      const stored = selectDocument.get(id)
      if (stored === undefined) return 'absent'
      return condition(stored) ? undefined : 'condition-failed'
    }
    const commitWrite = (write: PlantWrite, batch: BatchChanges): WriteResult => {
      switch (write.kind) {
        case 'create':
          if (insert.run(write.id, write.document).changes === 1) {
            recordChange(batch, changeOfWrite.create, write, write.context)
            return 'created'
          }
          return compareWithStored(write.document, selectDocument.get(write.id))
        case 'update': {
          const stored = selectDocument.get(write.id)
          if (stored === undefined) return 'absent'
          if (write.condition !== undefined && !write.condition(stored)) return 'condition-failed'
          if (isSameJson(stored, write.document)) return 'unchanged'
          replace.run(write.document, write.id)
          recordChange(batch, changeOfWrite.update, write, write.context)
          return 'updated'
        }
        case 'delete': {
          const refusal = refusedByCondition(write)
          if (refusal !== undefined) return refusal
          const document = remove.get(write.id)
          if (document === undefined) return 'absent'
          recordChange(batch, changeOfWrite.delete, { id: write.id, document }, write.context)
          return 'deleted'
        }
        default: return unreachable(write)
      }
    }
    // A batch of one is read alone; more share one read transaction, so one snapshot.
    const readDocuments = database.transaction((ids: readonly bigint[]) => ids.map((id) => selectDocument.get(id)))
    this.reads = new BatchedReads((ids) => {
      if (!database.open) throw new StoreUnavailableError(1)
      return this.translateErrors(() => ids.length === 1 ? [selectDocument.get(ids[0]!)] : readDocuments(ids))
    })
    this.readPage = (after, count) => after === undefined ? selectFirstPage.all(count) : selectPageAfter.all(after, count)
    const commitWrites = database.transaction((writes: readonly PlantWrite[]) => {
      const committedAt = Date.now()
      const batch = bundles.startBatch()
      const results = writes.map((write) => commitWrite(write, batch))
      bundles.write(batch, this.outbox, committedAt)
      return results
    })
    // A failed transaction was rolled back whole. "Busy" or "disk full" is the store's state,
    // the same for every write in the batch; anything else may be one write's own.
    this.writes = new BatchedWrites(async (writes) => this.translateErrors(() => {
      // A transaction left open by a failed rollback would turn the next one into a savepoint
      // inside it: nothing committed, nothing flushed.
      if (database.inTransaction) throw new StoreUnavailableError(1)
      return commitWrites.immediate(writes)
    }), (error) => !(error instanceof StoreUnavailableError), () => this.outbox, batchObserver, activeWriters)
    // Ready means able to write: take the write lock (as a create would) and read the file.
    const migrationVersion = database.prepare('SELECT max(version) FROM schema_migrations').pluck()
    const readUnderWriteLock = database.transaction(() => migrationVersion.get())
    this.readMigrationVersion = () => readUnderWriteLock.immediate()
    this.apiTokens = new SqliteApiTokenStore(database, (statement) => this.runTokenStatement(statement))
    this.webhooks = new SqliteWebhookStore(database, bundles, (statement) => this.runTokenStatement(statement), background, sweepStep)
  }

  async write<Write extends PlantWrite> (write: Write): Promise<WriteResults[Write['kind']]> {
    return this.writes.write(write)
  }

  useOutbox (outbox: Outbox): void {
    this.outbox = outbox
  }

  async getPlant (id: bigint): Promise<PlantRow | undefined> {
    if (!this.database.open) throw new StoreUnavailableError(1)
    const document = await this.reads.read(id)
    return document === undefined ? undefined : { id, document }
  }

  // One more than asked for says whether more follow.
  async listPlants (after: bigint | undefined, limit: number): Promise<PlantPage> {
    if (!this.database.open) throw new StoreUnavailableError(1)
    const plants = this.translateErrors(() => this.readPage(after, limit + 1))
    return { plants: plants.slice(0, limit), more: plants.length > limit }
  }

  async checkReady (): Promise<void> {
    this.translateErrors(this.readMigrationVersion)
  }

  async close (): Promise<void> {
    if (!this.database.open) return
    await this.writes.close()
    await this.background.stop()
    this.database.close()
  }

  // A token or webhook statement runs in autocommit. In a transaction left open by a failed rollback its
  // write would stay uncommitted, so then it is refused, as a batch of creates is.
  private runTokenStatement<T> (statement: () => T): T {
    if (!this.database.open || this.database.inTransaction) throw new StoreUnavailableError(1)
    return this.translateErrors(statement)
  }

  private translateErrors<T> (operation: () => T): T {
    try {
      return operation()
    } catch (error) {
      throw translateStoreError(error, isTransientSqliteError)
    }
  }
}
