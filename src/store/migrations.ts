// The schema of both backends, version by version, and the one runner that applies it.
// Append only: a released migration is never edited, a change is a new version.

export interface Migration {
  readonly version: number
  readonly name: string
  readonly sqlite: string
  readonly postgres: string
}

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'create plants',
    sqlite: `CREATE TABLE plants (
               id   INTEGER PRIMARY KEY,
               name TEXT NOT NULL,
               tag  TEXT
             ) STRICT`,
    postgres: `CREATE TABLE plants (
                 id   bigint PRIMARY KEY,
                 name text NOT NULL,
                 tag  text
               )`,
  },
  {
    // Each plant becomes the JSON document of its declared properties, so that a property added
    // to openapi.yaml is stored with no new column. A plant stored without a tag has no tag key.
    version: 2,
    name: 'store each plant as its JSON document',
    sqlite: `CREATE TABLE plant_documents (
               id       INTEGER PRIMARY KEY,
               document TEXT NOT NULL
             ) STRICT;
             INSERT INTO plant_documents (id, document)
               SELECT id, CASE WHEN tag IS NULL THEN json_object('name', name)
                               ELSE json_object('name', name, 'tag', tag) END
               FROM plants;
             DROP TABLE plants;
             ALTER TABLE plant_documents RENAME TO plants`,
    postgres: `ALTER TABLE plants ADD COLUMN document jsonb;
               UPDATE plants SET document = jsonb_strip_nulls(jsonb_build_object('name', name, 'tag', tag));
               ALTER TABLE plants ALTER COLUMN document SET NOT NULL, DROP COLUMN name, DROP COLUMN tag`,
  },
]

// What the runner needs of a backend: one connection of its own, on which beginLocked starts
// a transaction that holds the backend's migration lock (so that instances starting together
// apply each migration once) and that has the schema_migrations table.
export interface MigrationConnection {
  beginLocked (): Promise<void>
  appliedVersions (): Promise<readonly number[]>
  apply (migration: Migration): Promise<void>
  commit (): Promise<void>
  rollback (): Promise<void>
}

// Applies what is missing, up to `upTo` (every version by default), in one transaction: a
// failed migration leaves nothing behind.
export async function applyMigrations (connection: MigrationConnection, upTo = Number.POSITIVE_INFINITY): Promise<void> {
  try {
    await connection.beginLocked()
    const applied = new Set(await connection.appliedVersions())
    for (const migration of migrations) {
      if (migration.version <= upTo && !applied.has(migration.version)) await connection.apply(migration)
    }
    await connection.commit()
  } catch (error) {
    await connection.rollback().catch(() => undefined)
    throw error
  }
}
