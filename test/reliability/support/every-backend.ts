import type { Test } from 'tap'
import { privatePostgres, privatePostgresSkipReason } from '../../support/private-postgres.js'
import { testFolder } from '../../support/test-folder.js'

// Runs `body` on a new SQLite file and on a PostgreSQL cluster of its own, as subtests named
// "SQLite: <name>" and "PostgreSQL: <name>"; the latter is skipped, with the reason, where no
// cluster can be started outside CI.
export function testOnSqliteAndPrivatePostgres (t: Test, name: string, body: (t: Test, databaseUrl: string) => Promise<void>): void {
  t.test(`SQLite: ${name}`, async (t) => body(t, `sqlite:${testFolder(t)}/plants.db`))
  t.test(`PostgreSQL: ${name}`, { skip: privatePostgresSkipReason }, async (t) => {
    const database = await privatePostgres(t)
    await database.start()
    await body(t, database.url)
  })
}
