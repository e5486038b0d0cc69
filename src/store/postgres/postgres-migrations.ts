import type { ClientBase } from 'pg'

// Append only: a released migration is never edited, a change is a new version.
const migrations: ReadonlyArray<{ version: number, name: string, sql: string }> = [
  {
    version: 1,
    name: 'create plants',
    sql: `CREATE TABLE plants (
            id   bigint PRIMARY KEY,
            name text NOT NULL,
            tag  text
          )`,
  },
]

// One key for every instance of this service: instances that start together queue on it, so
// each migration is applied once. Any fixed int64 will do: this is 0x706c616e7473, "plants".
export const migrationLockKey = '123610793407603'

// Applies what is missing in one transaction that holds a transaction-level advisory lock, so
// several instances starting at once never race, and a failed migration leaves nothing behind.
export async function applyPostgresMigrations (client: ClientBase): Promise<void> {
  await client.query('BEGIN')
  try {
    // Names are any Unicode text: a database in another encoding would refuse some of them
    // with 500s at run time, so it is refused here, at start-up, instead.
    const encoding = await client.query<{ server_encoding: string }>('SHOW server_encoding')
    if (encoding.rows[0]?.server_encoding !== 'UTF8') {
      throw new Error(`the database must use UTF8 encoding, not ${encoding.rows[0]?.server_encoding}`)
    }
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [migrationLockKey])
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
                          version    integer PRIMARY KEY,
                          name       text NOT NULL,
                          applied_at timestamptz NOT NULL DEFAULT now()
                        )`)
    const applied = await client.query<{ version: number }>('SELECT version FROM schema_migrations')
    const appliedVersions = new Set(applied.rows.map((row) => row.version))
    for (const migration of migrations) {
      if (appliedVersions.has(migration.version)) continue
      await client.query(migration.sql)
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name])
    }
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  }
}
