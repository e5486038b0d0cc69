import { createHash } from 'node:crypto'
import type { Test } from 'tap'
import { mintManagedToken } from '../../src/auth/managed-token.js'
import { type NewApiToken, TokenNameTakenError } from '../../src/store/api-token-store.js'
import type { PlantStore } from '../../src/store/plant-store.js'
import { StoreUnavailableError } from '../../src/store/store-errors.js'

// One empty database of a backend, on which a test may open several stores.
export interface TokenTestDatabase {
  readonly openStore: () => Promise<PlantStore>
  // Every column of every row of api_tokens, read through a connection of its own.
  readonly readTokenRows: () => Promise<Array<Record<string, unknown>>>
}

const digestOf = (token: string): Buffer => createHash('sha256').update(token).digest()

function newToken (name: string, createdAt: Date, expiresAt: Date | null = null): NewApiToken & { token: string } {
  const token = mintManagedToken()
  return { token, name, digest: digestOf(token), createdAt, expiresAt }
}

// Times with milliseconds that are not zero, so that a backend rounding to the second shows.
const at = (time: string): Date => new Date(`2026-03-04T${time}Z`)

// What every PlantStore's apiTokens must do, whatever its backend. Each backend's test file
// calls this with a function that creates a fresh, empty database of its kind.
export function testApiTokenStoreContract (t: Test, createEmptyDatabase: (t: Test) => Promise<TokenTestDatabase>): void {
  async function openOn (t: Test, database: TokenTestDatabase): Promise<PlantStore> {
    const store = await database.openStore()
    t.teardown(() => store.close())
    return store
  }
  const open = async (t: Test): Promise<PlantStore> => openOn(t, await createEmptyDatabase(t))

  t.test('a token is created and found by its digest, its times to the millisecond', async (t) => {
    const { apiTokens } = await open(t)
    const forever = newToken('ci', at('05:06:07.089'))
    const expected = { name: 'ci', createdAt: at('05:06:07.089'), expiresAt: null, lastUsedAt: null, revokedAt: null, roles: null }
    t.same(await apiTokens.create(forever), expected)
    t.same(await apiTokens.findByDigest(forever.digest), expected, 'found, with no expiry')

    const expiring = newToken('deploy', at('05:06:08.001'), new Date('2026-04-03T05:06:08.999Z'))
    await apiTokens.create(expiring)
    t.same(await apiTokens.findByDigest(expiring.digest),
      { name: 'deploy', createdAt: at('05:06:08.001'), expiresAt: new Date('2026-04-03T05:06:08.999Z'), lastUsedAt: null, revokedAt: null, roles: null })
  })

  t.test('a token holds the roles it was created with, or every role (null) when none were named', async (t) => {
    const { apiTokens } = await open(t)
    const reader = { ...newToken('reader', at('05:00:00.001')), roles: ['plants:read'] }
    const both = { ...newToken('both', at('05:00:00.002')), roles: ['plants:write', 'plants:read'] }
    const none = { ...newToken('none', at('05:00:00.003')), roles: [] }
    const every = { ...newToken('every', at('05:00:00.004')), roles: null }
    for (const token of [reader, both, none, every]) {
      t.same((await apiTokens.create(token)).roles, token.roles, `${token.name}: created`)
      t.same((await apiTokens.findByDigest(token.digest))?.roles, token.roles, `${token.name}: found, the roles in their order`)
    }
    t.same((await apiTokens.list()).map(({ name, roles }) => [name, roles]),
      [['reader', ['plants:read']], ['both', ['plants:write', 'plants:read']], ['none', []], ['every', null]])
  })

  t.test('a digest of no token finds nothing', async (t) => {
    const { apiTokens } = await open(t)
    await apiTokens.create(newToken('ci', at('05:00:00.001')))
    t.equal(await apiTokens.findByDigest(digestOf(mintManagedToken())), undefined)
  })

  t.test('a name a token not revoked has is refused, and nothing is stored', async (t) => {
    const { apiTokens } = await open(t)
    await apiTokens.create(newToken('ci', at('05:00:00.001')))
    const second = newToken('ci', at('05:00:00.002'))
    await t.rejects(apiTokens.create(second), new TokenNameTakenError('ci'))
    t.equal(await apiTokens.findByDigest(second.digest), undefined)
    t.equal((await apiTokens.list()).length, 1)
  })

  t.test('concurrent creates under one name store exactly one token', async (t) => {
    const { apiTokens } = await open(t)
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => apiTokens.create(newToken('racer', at('05:00:00.001')))))
    t.equal(results.filter((result) => result.status === 'fulfilled').length, 1)
    t.ok(results.every((result) => result.status === 'fulfilled' || result.reason instanceof TokenNameTakenError))
    t.equal((await apiTokens.list()).length, 1)
  })

  t.test('a revoked token is still found, with when it was revoked, and its name can be given again', async (t) => {
    const { apiTokens } = await open(t)
    const first = newToken('ci', at('05:00:00.001'))
    await apiTokens.create(first)
    t.equal(await apiTokens.revoke('ci', at('06:00:00.123')), true)
    t.same(await apiTokens.findByDigest(first.digest),
      { name: 'ci', createdAt: at('05:00:00.001'), expiresAt: null, lastUsedAt: null, revokedAt: at('06:00:00.123'), roles: null })

    const second = newToken('ci', at('07:00:00.001'))
    await apiTokens.create(second)
    t.same((await apiTokens.findByDigest(second.digest))?.revokedAt, null, 'the new token is not revoked')
    await t.rejects(apiTokens.create(newToken('ci', at('08:00:00.001'))), TokenNameTakenError, 'the name is taken again')
  })

  t.test('revoking finds only a token not revoked yet', async (t) => {
    const { apiTokens } = await open(t)
    const token = newToken('ci', at('05:00:00.001'))
    await apiTokens.create(token)
    t.equal(await apiTokens.revoke('nobody', at('06:00:00.001')), false, 'no token has the name')
    t.equal(await apiTokens.revoke('ci', at('06:00:00.001')), true)
    t.equal(await apiTokens.revoke('ci', at('07:00:00.001')), false, 'already revoked')
    t.same((await apiTokens.findByDigest(token.digest))?.revokedAt, at('06:00:00.001'), 'when it was first revoked')
  })

  t.test('every token is listed, revoked ones included, oldest first', async (t) => {
    const { apiTokens } = await open(t)
    for (const [name, time] of [['b', '05:00:00.002'], ['c', '05:00:00.003'], ['a', '05:00:00.001']] as const) {
      await apiTokens.create(newToken(name, at(time)))
    }
    await apiTokens.revoke('c', at('06:00:00.001'))
    await apiTokens.create(newToken('c', at('07:00:00.001'), at('08:00:00.001')))
    t.same(await apiTokens.list(), [
      { name: 'a', createdAt: at('05:00:00.001'), expiresAt: null, lastUsedAt: null, revokedAt: null, roles: null },
      { name: 'b', createdAt: at('05:00:00.002'), expiresAt: null, lastUsedAt: null, revokedAt: null, roles: null },
      { name: 'c', createdAt: at('05:00:00.003'), expiresAt: null, lastUsedAt: null, revokedAt: at('06:00:00.001'), roles: null },
      { name: 'c', createdAt: at('07:00:00.001'), expiresAt: at('08:00:00.001'), lastUsedAt: null, revokedAt: null, roles: null },
    ])
  })

  t.test('an empty store lists no token', async (t) => {
    const { apiTokens } = await open(t)
    t.same(await apiTokens.list(), [])
  })

  t.test('a use is recorded only when later than the one stored', async (t) => {
    const { apiTokens } = await open(t)
    const token = newToken('ci', at('05:00:00.001'))
    await apiTokens.create(token)
    const lastUse = async (): Promise<Date | null | undefined> => (await apiTokens.findByDigest(token.digest))?.lastUsedAt
    await apiTokens.recordUse(token.digest, at('06:00:00.500'))
    t.same(await lastUse(), at('06:00:00.500'), 'the first use')
    await apiTokens.recordUse(token.digest, at('06:00:00.499'))
    t.same(await lastUse(), at('06:00:00.500'), 'an earlier use, recorded late, changes nothing')
    await apiTokens.recordUse(token.digest, at('06:01:00.001'))
    t.same(await lastUse(), at('06:01:00.001'), 'a later use moves it forward')
    await t.resolves(apiTokens.recordUse(digestOf(mintManagedToken()), at('06:02:00.000')), 'a digest of no token is no error')
  })

  t.test('the digest is all that is stored of a token', async (t) => {
    const database = await createEmptyDatabase(t)
    const { apiTokens } = await openOn(t, database)
    const { token, ...stored } = newToken('ci', at('05:00:00.001'), at('09:00:00.001'))
    await apiTokens.create(stored)
    await apiTokens.recordUse(stored.digest, at('06:00:00.001'))
    await apiTokens.revoke('ci', at('07:00:00.001'))
    const rows = await database.readTokenRows()
    t.equal(rows.length, 1)
    const row = rows[0] ?? {}
    t.same(Object.keys(row).sort(), ['created_at', 'digest', 'expires_at', 'id', 'last_used_at', 'name', 'revoked_at', 'roles'])
    t.same(row.digest, stored.digest, 'the SHA-256 digest, as 32 bytes')
    for (const [column, value] of Object.entries(row)) {
      const text = Buffer.isBuffer(value) ? value.toString('latin1') : String(value)
      t.notOk(text.includes(token) || text.includes(token.slice(3)), `${column} does not hold the token`)
    }
  })

  t.test('a token created through one store is found, used and revoked through another on the same database', async (t) => {
    const database = await createEmptyDatabase(t)
    const [first, second] = [await openOn(t, database), await openOn(t, database)]
    const token = newToken('ci', at('05:00:00.001'))
    await first.apiTokens.create(token)
    t.same((await second.apiTokens.findByDigest(token.digest))?.name, 'ci')
    await second.apiTokens.recordUse(token.digest, at('06:00:00.001'))
    await t.rejects(second.apiTokens.create(newToken('ci', at('05:00:00.002'))), TokenNameTakenError)
    t.equal(await second.apiTokens.revoke('ci', at('07:00:00.001')), true)
    t.same(await first.apiTokens.list(),
      [{ name: 'ci', createdAt: at('05:00:00.001'), expiresAt: null, lastUsedAt: at('06:00:00.001'), revokedAt: at('07:00:00.001'), roles: null }])
  })

  t.test('a closed store refuses every token call as unavailable', async (t) => {
    const database = await createEmptyDatabase(t)
    const store = await database.openStore()
    await store.close()
    const token = newToken('ci', at('05:00:00.001'))
    const calls: Array<() => Promise<unknown>> = [
      () => store.apiTokens.create(token),
      () => store.apiTokens.findByDigest(token.digest),
      () => store.apiTokens.recordUse(token.digest, at('06:00:00.001')),
      () => store.apiTokens.list(),
      () => store.apiTokens.revoke('ci', at('06:00:00.001')),
    ]
    for (const call of calls) await t.rejects(call(), StoreUnavailableError)
  })
}
