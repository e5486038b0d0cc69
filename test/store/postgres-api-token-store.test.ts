import { createHash } from 'node:crypto'
import t, { type Test } from 'tap'
import { PostgresPlantStore } from '../../src/store/postgres/postgres-plant-store.js'
import { StoreUnavailableError } from '../../src/store/store-errors.js'
import { emptySchema, postgresSkipReason, postgresTestDatabase, runAsAdmin } from '../support/test-databases.js'
import { testApiTokenStoreContract, type TokenTestDatabase } from './api-token-store-contract.js'

// A real PostgreSQL server, each test in a schema of its own (see support/test-databases.ts).

async function postgresTokenDatabase (t: Test): Promise<TokenTestDatabase & { schema: string }> {
  const { url, schema } = await postgresTestDatabase(t)
  return {
    schema,
    openStore: async () => PostgresPlantStore.open({ connectionString: url, poolSize: 4 }),
    readTokenRows: async () => runAsAdmin(`SELECT * FROM ${schema}.api_tokens ORDER BY id`),
  }
}

const runs = { skip: postgresSkipReason }
const digest = createHash('sha256').update('ps_not_a_real_token').digest()

t.test('the PostgreSQL store keeps the API token store contract', runs, async (t) => {
  testApiTokenStoreContract(t, postgresTokenDatabase)
})

t.test('an unreachable server: every token call is unavailable at once', runs, async (t) => {
  const store = await PostgresPlantStore.open({ connectionString: 'postgres://postgres@127.0.0.1:1/test', poolSize: 2 })
  t.teardown(() => store.close())
  const started = Date.now()
  const calls: Array<() => Promise<unknown>> = [
    () => store.apiTokens.create({ name: 'ci', digest, createdAt: new Date(), expiresAt: null }),
    () => store.apiTokens.findByDigest(digest),
    () => store.apiTokens.recordUse(digest, new Date()),
    () => store.apiTokens.list(),
    () => store.apiTokens.revoke('ci', new Date()),
  ]
  for (const call of calls) await t.rejects(call(), StoreUnavailableError)
  t.ok(Date.now() - started < 3000, 'none hangs')
})

t.test('a database that comes back empty is migrated again by the token call that finds it so', runs, async (t) => {
  const database = await postgresTokenDatabase(t)
  const store = await database.openStore()
  t.teardown(() => store.close())
  await store.apiTokens.create({ name: 'ci', digest, createdAt: new Date(), expiresAt: null })
  await emptySchema(database.schema)
  t.equal(await store.apiTokens.findByDigest(digest), undefined, 'the named statement finds the new table')
  await t.resolves(store.apiTokens.create({ name: 'ci', digest, createdAt: new Date(), expiresAt: null }))
  t.equal((await store.apiTokens.list()).length, 1)
})

t.test('a digest of any other length than 32 bytes is refused by the table', runs, async (t) => {
  const database = await postgresTokenDatabase(t)
  await (await database.openStore()).close()
  await t.rejects(runAsAdmin(`INSERT INTO ${database.schema}.api_tokens (name, digest, created_at) VALUES ('ci', $1, now())`,
    [digest.subarray(1)]), { code: '23514' })
})
