import { createHash } from 'node:crypto'
import t, { type Test } from 'tap'
import { Database } from '../../src/store/sqlite/sqlite-driver.js'
import { SqlitePlantStore } from '../../src/store/sqlite/sqlite-plant-store.js'
import { StoreUnavailableError } from '../../src/store/store-errors.js'
import { testApiTokenStoreContract, type TokenTestDatabase } from './api-token-store-contract.js'
import { testFolder } from '../support/test-folder.js'

function readTable (filename: string, sql: string): Array<Record<string, unknown>> {
  const database = new Database(filename, { readonly: true })
  try {
    return database.prepare<[], Record<string, unknown>>(sql).all()
  } finally {
    database.close()
  }
}

function sqliteTokenDatabase (t: Test): TokenTestDatabase & { filename: string } {
  const filename = `${testFolder(t)}/plants.db`
  return {
    filename,
    openStore: async () => SqlitePlantStore.open({ filename, busyTimeoutMs: 50 }),
    readTokenRows: async () => readTable(filename, 'SELECT * FROM api_tokens ORDER BY id'),
  }
}

const digest = createHash('sha256').update('ps_not_a_real_token').digest()

t.test('the SQLite store keeps the API token store contract', async (t) => {
  testApiTokenStoreContract(t, async (t) => sqliteTokenDatabase(t))
})

t.test('times are kept as ISO-8601 UTC text to the millisecond, as a person reading the file expects', async (t) => {
  const database = sqliteTokenDatabase(t)
  const store = await database.openStore()
  t.teardown(() => store.close())
  await store.apiTokens.create({ name: 'ci', digest, createdAt: new Date('2026-03-04T05:06:07.080Z'), expiresAt: null })
  await store.apiTokens.recordUse(digest, new Date('2026-03-04T06:00:00Z'))
  t.same(readTable(database.filename, 'SELECT created_at, expires_at, last_used_at, revoked_at FROM api_tokens'),
    [{ created_at: '2026-03-04T05:06:07.080Z', expires_at: null, last_used_at: '2026-03-04T06:00:00.000Z', revoked_at: null }])
})

t.test('a time in any other form is refused by the table, so text order stays time order', async (t) => {
  const database = sqliteTokenDatabase(t)
  await (await database.openStore()).close()
  const connection = new Database(database.filename)
  t.teardown(() => connection.close())
  const insert = connection.prepare('INSERT INTO api_tokens (name, digest, created_at) VALUES (?, ?, ?)')
  for (const createdAt of ['2026-03-04T05:06:07Z', '2026-03-04 05:06:07.000', '+010000-01-01T00:00:00.000Z', '2026-02-30T00:00:00.000Z']) {
    t.throws(() => insert.run('ci', digest, createdAt), { code: 'SQLITE_CONSTRAINT_CHECK' }, createdAt)
  }
  t.throws(() => insert.run('ci', digest.subarray(1), '2026-03-04T05:06:07.000Z'), { code: 'SQLITE_CONSTRAINT_CHECK' }, 'a digest of 31 bytes')
})

t.test('token writes under a write lock held elsewhere are unavailable, and succeed once it is gone', async (t) => {
  const database = sqliteTokenDatabase(t)
  const store = await database.openStore()
  t.teardown(() => store.close())
  const other = new Database(database.filename)
  t.teardown(() => other.close())
  other.exec('BEGIN IMMEDIATE')
  const token = { name: 'ci', digest, createdAt: new Date(), expiresAt: null }
  await t.rejects(store.apiTokens.create(token), StoreUnavailableError)
  await t.rejects(store.apiTokens.revoke('ci', new Date()), StoreUnavailableError)
  t.same(await store.apiTokens.list(), [], 'reads go on')
  other.exec('ROLLBACK')
  await t.resolves(store.apiTokens.create(token))
})
