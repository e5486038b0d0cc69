import type { ClientBase } from 'pg'
import type { MigrationConnection } from '../migration-runner.js'

// One key for every instance of this service: instances that start together queue on it, so
// each migration is applied once. Any fixed int64 will do: this is 0x706c616e7473, "plants".
export const migrationLockKey = '123610793407603'

// A transaction-level advisory lock, released by the commit or rollback.
export function postgresMigrationConnection (client: ClientBase): MigrationConnection {
  return {
    async beginLocked () {
      await client.query('BEGIN')
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
    },
    async appliedVersions () {
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations')
      return rows.map((row) => row.version)
    },
    async apply (migration) {
      await client.query(migration.postgres)
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name])
    },
    async commit () {
      await client.query('COMMIT')
    },
    async rollback () {
      await client.query('ROLLBACK')
    },
  }
}
