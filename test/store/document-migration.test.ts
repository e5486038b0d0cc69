import t from 'tap'
import { buildTestApp } from '../support/helper.js'
import { migrateAsTheReleaseAt, type TestDatabase, testOnEveryBackend, withOwnConnection } from '../support/test-databases.js'

// A database written by the release before plants became documents (schema version 1, a column
// per field) is migrated when the service starts on it, with nothing lost: every plant answers
// a retry with a replay and another body with a conflict, and reads back as it was.

interface ReleasedRow { id: bigint, name: string, tag: string | null }

const releasedRows: ReleasedRow[] = [
  { id: -(2n ** 63n), name: 'Lowest', tag: null },
  { id: 1n, name: 'Fern', tag: 'shade' },
  { id: 2n, name: 'Moss', tag: '' },
  { id: 9007199254740993n, name: 'Kaktus 🌵 — «Ĉapelo»', tag: '多肉植物' },
  { id: 2n ** 63n - 1n, name: 'quote " backslash \\ tab \t newline \n bell \u0007 del \u007f', tag: '\u2028\u2029' },
]

async function writeAsTheReleaseBefore (database: TestDatabase): Promise<void> {
  await withOwnConnection(database, async (connection) => {
    await migrateAsTheReleaseAt(connection, 1)
    for (const { id, name, tag } of releasedRows) {
      if (connection.backend === 'SQLite') connection.sqlite.prepare('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?)').run(id, name, tag)
      else await connection.postgres.query('INSERT INTO plants (id, name, tag) VALUES ($1::bigint, $2, $3)', [id.toString(), name, tag])
    }
  })
}

function plantOf ({ name, tag }: ReleasedRow): object {
  return tag === null ? { name } : { name, tag }
}

// The NewPlant body for a row, its id written as bare digits.
function body (row: ReleasedRow, change: object = {}): string {
  return JSON.stringify({ ...plantOf(row), ...change }).replace('{', `{"id":${row.id},`)
}

testOnEveryBackend(t, 'plants stored by the release before are migrated into documents with nothing lost', async (t, database) => {
  await writeAsTheReleaseBefore(database)
  const { createPlant } = await buildTestApp(t, { DATABASE_URL: database.url })

  for (const row of releasedRows) {
    const replay = await createPlant(body(row))
    t.equal(replay.statusCode, 200, `plant ${row.id}: the same body is a replay`)
    t.same(replay.body, plantOf(row), `plant ${row.id}: echoed as stored`)
    t.equal((await createPlant(body(row, { tag: 'other' }))).statusCode, 409, `plant ${row.id}: another tag is a conflict`)
  }
  t.equal((await createPlant(body(releasedRows[0]!, { tag: '' }))).statusCode, 409, 'no tag is still not an empty tag')
  t.same(await database.readStoredPlants(), releasedRows, 'every plant reads back as it was')
})
