import t, { type Test } from 'tap'
import { type AcceptedToken, notMine, type TokenVerdict } from '../../src/auth/bearer-credentials.js'
import { issueManagedToken, mintManagedToken } from '../../src/auth/managed-token.js'
import { createManagedTokenVerifier } from '../../src/auth/managed-token-verifier.js'
import { ApiError } from '../../src/errors/api-errors.js'
import type { ApiTokenStore } from '../../src/store/api-token-store.js'
import { SqlitePlantStore } from '../../src/store/sqlite/sqlite-plant-store.js'
import { testFolder } from '../support/test-folder.js'

// The managed-token verifier on a real SQLite store, counted from outside: when it asks the store,
// when it writes a token's last use, and what each state of a token gets.

interface CountedStore {
  readonly tokens: ApiTokenStore
  readonly lookups: () => number
  readonly recordedUses: () => number
}

async function countedStore (t: Test): Promise<CountedStore> {
  const store = await SqlitePlantStore.open({ filename: `${testFolder(t)}/plants.db` })
  t.teardown(() => store.close())
  let lookups = 0
  let recordedUses = 0
  const tokens: ApiTokenStore = {
    create: async (token) => store.apiTokens.create(token),
    findByDigest: async (digest) => { lookups++; return store.apiTokens.findByDigest(digest) },
    recordUse: async (digest, at) => { recordedUses++; return store.apiTokens.recordUse(digest, at) },
    list: async () => store.apiTokens.list(),
    revoke: async (name, at) => store.apiTokens.revoke(name, at),
  }
  return { tokens, lookups: () => lookups, recordedUses: () => recordedUses }
}

function clock (start = Date.now()): { now: () => number, advance: (ms: number) => void } {
  let time = start
  return { now: () => time, advance: (ms) => { time += ms } }
}

function accepted (verdict: TokenVerdict): AcceptedToken {
  if (verdict === notMine || verdict instanceof ApiError) throw new Error(`not accepted: ${String(verdict)}`)
  return verdict
}

t.test('what was read of a token is trusted for the cache time, then read again', async (t) => {
  const store = await countedStore(t)
  const time = clock()
  const verify = createManagedTokenVerifier(store.tokens, { cacheTtlMs: 5000, now: time.now })
  const { token } = await issueManagedToken(store.tokens, { name: 'ci', now: new Date(time.now()) })

  const first = accepted(await verify(token))
  t.same(first.identity, { kind: 'token', name: 'ci', key: 'token:ci', roles: 'every role' })
  t.equal(first.reusableUntil, time.now() + 5000, 'a connection may reuse it for the cache time')
  time.advance(4999)
  accepted(await verify(token))
  t.equal(store.lookups(), 1, 'within the cache time: no second lookup')
  time.advance(1)
  accepted(await verify(token))
  t.equal(store.lookups(), 2, 'after it: read again')
})

t.test('concurrent requests with one token share one lookup', async (t) => {
  const store = await countedStore(t)
  const verify = createManagedTokenVerifier(store.tokens, { cacheTtlMs: 5000 })
  const { token } = await issueManagedToken(store.tokens, { name: 'ci' })
  const verdicts = await Promise.all(Array.from({ length: 20 }, async () => verify(token)))
  t.equal(verdicts.filter((verdict) => accepted(verdict).identity.name === 'ci').length, 20)
  t.equal(store.lookups(), 1)
})

t.test('a mistyped token, or one of another kind, never reaches the store', async (t) => {
  const store = await countedStore(t)
  const verify = createManagedTokenVerifier(store.tokens, { cacheTtlMs: 5000 })
  const token = mintManagedToken()
  t.match(await verify(`${token.slice(0, -1)}${token.endsWith('0') ? '1' : '0'}`), { statusCode: 401, code: 40102, message: /mistyped/ })
  t.match(await verify(token.slice(0, 20)), { statusCode: 401, message: /mistyped/ })
  t.equal(await verify('test-token-0123456789'), notMine)
  t.equal(store.lookups(), 0)
  t.match(await verify(token), { statusCode: 401, message: 'the bearer token is not valid' }, 'well-formed but unknown: looked up, and refused')
  t.equal(store.lookups(), 1)
})

t.test('a token\'s last use is written at most once a minute, and only for a usable token', async (t) => {
  const store = await countedStore(t)
  const time = clock()
  const verify = createManagedTokenVerifier(store.tokens, { cacheTtlMs: 0, now: time.now })
  const { token } = await issueManagedToken(store.tokens, { name: 'ci', now: new Date(time.now()) })
  // The write is put off until the requests waiting on the lookup are answered (setImmediate).
  const writesDone = async (): Promise<void> => new Promise((resolve) => setImmediate(resolve))
  for (let second = 0; second < 120; second++) {
    accepted(await verify(token))
    await writesDone()
    time.advance(1000)
  }
  t.equal(store.lookups(), 120, 'with no cache, every verification reads the token')
  t.equal(store.recordedUses(), 2, 'but writes its last use twice in two minutes')
  const [listed] = await store.tokens.list()
  t.ok(listed?.lastUsedAt !== null && time.now() - (listed?.lastUsedAt?.getTime() ?? 0) <= 61_000, 'to within a minute')

  await store.tokens.revoke('ci', new Date(time.now()))
  time.advance(120_000)
  t.match(await verify(token), { message: 'the token has been revoked' })
  await writesDone()
  t.equal(store.recordedUses(), 2, 'a revoked token\'s use is not recorded')
})

t.test('an expiry is exact, whatever the cache time', async (t) => {
  const store = await countedStore(t)
  const time = clock()
  const verify = createManagedTokenVerifier(store.tokens, { cacheTtlMs: 60_000, now: time.now })
  const { token } = await issueManagedToken(store.tokens, { name: 'short', expiresAt: new Date(time.now() + 1000), now: new Date(time.now()) })
  t.equal(accepted(await verify(token)).reusableUntil, time.now() + 1000, 'a connection reuses it no later than its expiry')
  time.advance(1000)
  t.match(await verify(token), { statusCode: 401, message: 'the token has expired' })
  t.equal(store.lookups(), 1, 'judged from what was read')
})
