import t from 'tap'
import { mintManagedToken, tokenDigest } from '../../src/auth/managed-token.js'
import { buildTestApp } from '../support/helper.js'
import { migrateAsTheReleaseAt, type TestDatabase, testOnEveryBackend, withOwnConnection } from '../support/test-databases.js'

// A managed token issued by the release before roles (schema version 3) keeps every role once
// the service has migrated its database: it may still call every operation.

async function issueAsTheReleaseBefore (database: TestDatabase, token: string): Promise<void> {
  const digest = tokenDigest(token)
  await withOwnConnection(database, async (connection) => {
    await migrateAsTheReleaseAt(connection, 3)
    if (connection.backend === 'SQLite') {
      connection.sqlite.prepare('INSERT INTO api_tokens (name, digest, created_at) VALUES (?, ?, ?)')
        .run('before-roles', digest, new Date().toISOString())
    } else {
      await connection.postgres.query('INSERT INTO api_tokens (name, digest, created_at) VALUES ($1, $2, now())', ['before-roles', digest])
    }
  })
}

testOnEveryBackend(t, 'a token issued before roles keeps every role', async (t, database) => {
  const token = mintManagedToken()
  await issueAsTheReleaseBefore(database, token)
  const { app, send, createPlant } = await buildTestApp(t, { DATABASE_URL: database.url, API_TOKENS: '' })
  t.same((await app.apiTokens.list()).map(({ name, roles }) => [name, roles]), [['before-roles', null]], 'listed with every role')
  const authorization = `Bearer ${token}`
  t.equal((await createPlant({ id: 1, name: 'Fern' }, { authorization })).statusCode, 200, 'createPlant')
  t.equal((await send({ method: 'GET', url: '/plants/1', headers: { authorization } })).statusCode, 200, 'getPlant')
  t.equal((await send({ method: 'GET', url: '/plants', headers: { authorization } })).statusCode, 200, 'listPlants')
  t.equal((await send({ method: 'DELETE', url: '/plants/1', headers: { authorization } })).statusCode, 204, 'deletePlant')
})
