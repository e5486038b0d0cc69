import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { parseIntoClientConfig } from 'pg-connection-string'
import { canonicalJson } from '../../json/canonical-json.js'
import { parseJsonExactly } from '../../json/parse-json-exactly.js'
import type { ApiTokenStore } from '../api-token-store.js'
import type { BatchObserver } from '../batch-observer.js'
import { BatchedCreates, compareWithStored, type CreateResult } from '../group-commit.js'
import { applyMigrations, type MigrationReport } from '../migrations.js'
import type { CreatePlantOutcome, PlantRow, PlantStore } from '../plant-store.js'
import { StoreUnavailableError, translateStoreError } from '../store-errors.js'
import { PostgresApiTokenStore } from './postgres-api-token-store.js'
import { isTransientPostgresError } from './postgres-errors.js'
import { postgresMigrationConnection } from './postgres-migrations.js'

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
  readonly batchObserver?: BatchObserver | undefined
}

// Errors raised by the batch statement itself, which then wrote nothing: only these may be one
// create's own (a trigger or constraint refusing it), so only these are retried create by create.
const refusedByBatchStatement = new WeakSet<object>()

// One named statement stores a whole batch of plants with distinct ids and returns the ids it
// inserted. It inserts in id order, so two instances storing overlapping ids cannot deadlock.
// Its plan reads no stored rows (ON CONFLICT goes through the primary key's index), so the plan
// the server caches for it after a few runs cannot go stale as the table grows, and planning
// is not paid again at every batch.
const insertPlants = `INSERT INTO plants (id, document)
SELECT * FROM unnest($1::bigint[], $2::jsonb[]) AS batch (id, document) ORDER BY id
ON CONFLICT (id) DO NOTHING RETURNING id::text AS id`
// The plants stored under the ids the batch found taken. A statement of its own, so that it
// sees rows other sessions committed while the insert ran. It is sent unnamed, so the server
// plans it afresh at every run: a plan cached while the table was new and small would read
// with a sequential scan, slower with every plant stored until the table is next analysed.
const selectDocuments = 'SELECT id::text AS id, document::text AS document FROM plants WHERE id = ANY($1::bigint[])'
const selectDocument = 'SELECT document::text AS document FROM plants WHERE id = $1::bigint'
const undefinedTable = '42P01'
const selectReadiness = 'SELECT max(version) AS version, pg_is_in_recovery() AS in_recovery FROM schema_migrations'

// Set at the start of every session, after anything the URL asks for, so they always hold:
// a 200 is sent only once the commit is durable, and the insert-or-compare relies on each
// statement seeing what was committed before it began, which stricter isolation levels refuse
// to do (their losing racers would get serialization failures, that is 503s).
const sessionSettings = ['-c synchronous_commit=on', '-c default_transaction_isolation=read\\ committed']

export class PostgresPlantStore implements PlantStore {
  readonly apiTokens: ApiTokenStore
  private readonly connection: pg.ClientConfig
  private readonly statementTimeoutMs: number
  private readonly pool: pg.Pool
  private readonly creates: BatchedCreates
  private migrated = false
  migrationsAtOpen: MigrationReport | undefined
  private migrationInFlight: Promise<void> | undefined
  private closed = false

  // The store is returned even while the database is unreachable: requests get a 503 and the
  // migrations are tried again by the next request or readiness check, so the service starts
  // in any order with its database and recovers by itself. Any other failure stops start-up.
  static async open (options: PostgresPlantStoreOptions): Promise<PostgresPlantStore> {
    const store = new PostgresPlantStore(options)
    try {
      // Start-up waits for the migrations however long they take, another instance's included.
      await store.migrateOnce()
    } catch (error) {
      if (!isTransientPostgresError(error)) {
        await store.close()
        throw error
      }
    }
    return store
  }

  private constructor ({
    connectionString, poolSize, connectTimeoutMs = 2000, statementTimeoutMs = 5000, onIdleConnectionError, batchObserver,
  }: PostgresPlantStoreOptions) {
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
      max: poolSize,
      statement_timeout: statementTimeoutMs,
      query_timeout: statementTimeoutMs + 1000,
    })
    // Without a listener, an idle connection that breaks would crash the process.
    this.pool.on('error', (error) => onIdleConnectionError?.(error))
    this.creates = new BatchedCreates(
      async (plants) => this.translateErrors(() => this.onMigratedTables(() => this.insertOrCompare(plants))),
      (error) => refusedByBatchStatement.has(error as object),
      batchObserver
    )
    this.apiTokens = new PostgresApiTokenStore(async (query) => this.runQuery(query))
  }

  async createPlant (plant: PlantRow): Promise<CreatePlantOutcome> {
    return this.creates.create(plant)
  }

  // One insert for the batch, in autocommit: durable once it returns; the ids it found taken are
  // then read by a second statement. The first create of each id goes into the insert; a later
  // create of the same id in the batch is then compared with what the earlier one left stored,
  // as if it had arrived alone just after.
  private async insertOrCompare (plants: readonly PlantRow[]): Promise<CreateResult[]> {
    const firstOfEachId = firstCreateOfEachId(plants)
    const insertedIds = new Set(await this.runBatchStatement(firstOfEachId))
    const storedById = new Map<string, string>()
    const takenIds: string[] = []
    for (const plant of firstOfEachId) {
      const id = plant.id.toString()
      if (insertedIds.has(id)) storedById.set(id, plant.document)
      else takenIds.push(id)
    }
    await this.readStoredDocuments(takenIds, storedById)

    return plants.map((plant) => {
      const id = plant.id.toString()
      // Only the first create of an id can have inserted it; the ones after it compare.
      if (insertedIds.delete(id)) return 'created'
      // Plants are never deleted, so a taken id always has a row.
      const stored = storedById.get(id)
      if (stored === undefined) throw new Error(`plant ${id} was neither inserted nor found`)
      return compareWithStored(plant, stored)
    })
  }

  // The ids the statement inserted, as decimal strings.
  private async runBatchStatement (plants: readonly PlantRow[]): Promise<string[]> {
    try {
      const { rows } = await this.pool.query<{ id: string }>({
        name: 'insert-plants',
        text: insertPlants,
        values: [plants.map(({ id }) => id.toString()), plants.map(({ document }) => document)],
      })
      return rows.map(({ id }) => id)
    } catch (error) {
      if (error instanceof pg.DatabaseError && !isTransientPostgresError(error) && error.code !== undefinedTable) {
        refusedByBatchStatement.add(error)
      }
      throw error
    }
  }

  private async readStoredDocuments (ids: readonly string[], storedById: Map<string, string>): Promise<void> {
    if (ids.length === 0) return
    const { rows } = await this.pool.query<{ id: string, document: string }>(selectDocuments, [ids])
    for (const { id, document } of rows) storedById.set(id, document)
  }

  // jsonb keeps a document its own way (its keys by length, spaces after colons): it is answered
  // in the canonical form both backends store and echo.
  async getPlant (id: bigint): Promise<PlantRow | undefined> {
    if (this.closed) throw new StoreUnavailableError(1)
    const { rows } = await this.translateErrors(() => this.onMigratedTables(() =>
      this.pool.query<{ document: string }>({ name: 'select-plant', text: selectDocument, values: [id.toString()] })))
    const [row] = rows
    return row === undefined ? undefined : { id, document: canonicalJson(parseJsonExactly(row.document)) }
  }

  // Ready means migrated and connected to a server that takes writes (not a standby).
  async checkReady (): Promise<void> {
    const { rows } = await this.translateErrors(() => this.onMigratedTables(() =>
      this.pool.query<{ in_recovery: boolean }>({ name: 'select-readiness', text: selectReadiness })))
    if (rows[0]?.in_recovery !== false) throw new StoreUnavailableError(1)
  }

  async close (): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.creates.close()
    await this.pool.end()
  }

  // A query of the token store, run as the plants' own are.
  private async runQuery<Row extends pg.QueryResultRow> (query: pg.QueryConfig): Promise<pg.QueryResult<Row>> {
    if (this.closed) throw new StoreUnavailableError(1)
    return this.translateErrors(() => this.onMigratedTables(() => this.pool.query<Row>(query)))
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
    const client = new pg.Client(this.connection)
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

  private async translateErrors<T> (operation: () => Promise<T>): Promise<T> {
    try {
      return await operation()
    } catch (error) {
      throw translateStoreError(error, isTransientPostgresError)
    }
  }
}

function firstCreateOfEachId (plants: readonly PlantRow[]): PlantRow[] {
  const firsts = new Map<bigint, PlantRow>()
  for (const plant of plants) if (!firsts.has(plant.id)) firsts.set(plant.id, plant)
  return [...firsts.values()]
}
