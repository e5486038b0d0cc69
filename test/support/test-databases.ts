import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { Test } from 'tap'
import { applyMigrations } from '../../src/store/migration-runner.js'
import type { PlantStore } from '../../src/store/plant-store.js'
import { PostgresPlantStore } from '../../src/store/postgres/postgres-plant-store.js'
import { postgresMigrationConnection } from '../../src/store/postgres/postgres-migrations.js'
import { Database } from '../../src/store/sqlite/sqlite-driver.js'
import { SqlitePlantStore } from '../../src/store/sqlite/sqlite-plant-store.js'
import { sqliteMigrationConnection } from '../../src/store/sqlite/sqlite-migrations.js'
import { readStoredPlants as readSqlitePlants, type StoredPlantRow, toStoredPlantRow } from './stored-plants.js'
import { testFolder } from './test-folder.js'

// The PostgreSQL server the tests use: each test gets a schema of its own on it, dropped when
// the test ends, so runs and parallel test files never see each other's data.
export const testPostgresUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

// A developer without PostgreSQL sees the PostgreSQL tests skipped with this reason. CI sets
// CI=true and never skips them: there, an unreachable server fails the tests instead.
export const postgresSkipReason: string | false = process.env.CI === 'true' ? false : await probePostgres()

async function probePostgres (): Promise<string | false> {
  const client = new pg.Client({ connectionString: testPostgresUrl, connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
    return false
  } catch (error) {
    return `PostgreSQL is not reachable at ${testPostgresUrl} (${error instanceof Error ? error.message : String(error)}); ` +
      'start it or set TEST_POSTGRES_URL'
  } finally {
    await client.end().catch(() => undefined)
  }
}

export interface TestDatabase {
  readonly backend: 'SQLite' | 'PostgreSQL'
  // The DATABASE_URL that points the service at this database.
  readonly url: string
  // What the database really holds, read through a connection of its own, ids as exact bigints.
  readonly readStoredPlants: () => Promise<StoredPlantRow[]>
}

export function sqliteTestDatabase (t: Test): TestDatabase {
  const file = `${testFolder(t)}/plants.db`
  return { backend: 'SQLite', url: `sqlite:${file}`, readStoredPlants: async () => readSqlitePlants(file) }
}

// A store opened straight on the test's database (not through an app), closed when the test ends.
export async function openTestStore (t: Test, database: TestDatabase): Promise<PlantStore> {
  const store = database.backend === 'SQLite'
    ? await SqlitePlantStore.open({ filename: database.url.slice('sqlite:'.length) })
    : await PostgresPlantStore.open({ connectionString: database.url, poolSize: 2 })
  t.teardown(() => store.close())
  return store
}

export interface PostgresTestDatabase extends TestDatabase {
  // The schema that holds this test's tables, for reading or breaking them from outside.
  readonly schema: string
}

export async function postgresTestDatabase (t: Test): Promise<PostgresTestDatabase> {
  const schema = `plant_store_test_${randomBytes(6).toString('hex')}`
  await runAsAdmin(`CREATE SCHEMA ${schema}`)
  t.teardown(() => runAsAdmin(`DROP SCHEMA ${schema} CASCADE`))
  return {
    backend: 'PostgreSQL',
    schema,
    url: postgresUrlWithSchema(testPostgresUrl, schema),
    readStoredPlants: async () => readPostgresPlants(testPostgresUrl, `${schema}.plants`),
  }
}

// The same URL, with the service's tables in `schema`.
export function postgresUrlWithSchema (url: string, schema: string): string {
  const withSchema = new URL(url)
  withSchema.searchParams.set('options', `-c search_path=${schema}`)
  return withSchema.toString()
}

// What a PostgreSQL table of plants holds, read through a connection of its own, ids as exact
// bigints (as text across the driver).
export async function readPostgresPlants (connectionString: string, table = 'plants'): Promise<StoredPlantRow[]> {
  // Ordered by the bigint column itself: the text of the ids would sort 10 before 9.
  const rows = await runSql<{ id_text: string, document: string }>(
    connectionString, `SELECT id::text AS id_text, document::text AS document FROM ${table} ORDER BY id`)
  return rows.map(({ id_text: idText, document }) => toStoredPlantRow(BigInt(idText), document))
}

// The database as it comes back when recreated without its volume: every table gone, whichever
// migrations made them.
export async function emptySchema (schema: string): Promise<void> {
  await runAsAdmin(`DROP SCHEMA ${schema} CASCADE; CREATE SCHEMA ${schema}`)
}

export async function runAsAdmin<Row extends object = object> (sql: string, values: unknown[] = []): Promise<Row[]> {
  return runSql<Row>(testPostgresUrl, sql, values)
}

async function runSql<Row extends object> (connectionString: string, sql: string, values: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString })
  await client.connect()
  try {
    return (await client.query<Row>(sql, values)).rows
  } finally {
    await client.end()
  }
}

// A connection to a test's database of its own, through the backend's driver: for writing it as
// an earlier release did, or as another process would.
export type OwnConnection =
  | { readonly backend: 'SQLite', readonly sqlite: Database }
  | { readonly backend: 'PostgreSQL', readonly postgres: pg.Client }

// Runs `use` on an own connection to the database, closed once it is done.
export async function withOwnConnection<T> (database: TestDatabase, use: (connection: OwnConnection) => Promise<T>): Promise<T> {
  if (database.backend === 'SQLite') {
    const sqlite = new Database(database.url.slice('sqlite:'.length))
    try {
      return await use({ backend: 'SQLite', sqlite })
    } finally {
      sqlite.close()
    }
  }
  const postgres = new pg.Client({ connectionString: database.url })
  await postgres.connect()
  try {
    return await use({ backend: 'PostgreSQL', postgres })
  } finally {
    await postgres.end()
  }
}

// One statement on an own connection, as another process would run it: the rows it returns, if any.
export async function runOnOwnConnection<Row = unknown> (database: TestDatabase, sql: string): Promise<Row[]> {
  return withOwnConnection(database, async (connection) => {
    if (connection.backend === 'PostgreSQL') return (await connection.postgres.query(sql)).rows as Row[]
    const statement = connection.sqlite.prepare(sql)
    if (statement.reader) return statement.all() as Row[]
    statement.run()
    return []
  })
}

// Applies the migrations up to `version` alone, as the release whose schema that was did.
export async function migrateAsTheReleaseAt (connection: OwnConnection, version: number): Promise<void> {
  await applyMigrations(connection.backend === 'SQLite' ? sqliteMigrationConnection(connection.sqlite) : postgresMigrationConnection(connection.postgres), version)
}

// A second session on the test's database, in a transaction of its own that the test commits or
// rolls back: for holding locks the store must wait on. Closed when the test ends.
export async function otherTransaction (t: Test, connectionString: string): Promise<pg.Client> {
  const other = new pg.Client({ connectionString })
  await other.connect()
  t.teardown(() => other.end())
  await other.query('BEGIN')
  return other
}

// Runs `body` once per backend, as subtests named after it; the PostgreSQL run is skipped, with
// the reason shown, only where PostgreSQL is not available outside CI.
export function testOnEveryBackend (t: Test, name: string, body: (t: Test, database: TestDatabase) => Promise<void>): void {
  t.test(`${name} (SQLite)`, async (t) => body(t, sqliteTestDatabase(t)))
  t.test(`${name} (PostgreSQL)`, { skip: postgresSkipReason }, async (t) => body(t, await postgresTestDatabase(t)))
}
