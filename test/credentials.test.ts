import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { issueManagedToken, mintManagedToken } from '../src/auth/managed-token.js'
import { buildTestApp, type CheckedResponse, type TestApp, testToken } from './support/helper.js'
import { signingKey, signJwt, testAudience, testIssuer, writeJwksFile } from './support/jwt-keys.js'
import { testOnEveryBackend } from './support/test-databases.js'
import { testFolder } from './support/test-folder.js'

// Every way of authenticating, alone and composed, on both backends, through the app: which
// requests are accepted, who they are accepted as, and how each refusal reads.

const plant = { id: 1, name: 'Fern' }

async function createWith (app: TestApp, token: string): Promise<CheckedResponse> {
  return app.createPlant(plant, { authorization: `Bearer ${token}` })
}

function assertRefused (t: Test, response: CheckedResponse, description: string): void {
  t.equal(response.statusCode, 401, `refused: ${description}`)
  t.same(response.body, { error: 40102, message: description })
  t.equal(response.headers['www-authenticate'],
    `Bearer realm="plant-store", error="invalid_token", error_description="${description}"`)
}

async function jwtSetup (t: Test): Promise<{ settings: Record<string, string>, sign: typeof signJwt, key: Awaited<ReturnType<typeof signingKey>> }> {
  const key = await signingKey('key-1')
  const file = writeJwksFile(testFolder(t), [key])
  return { settings: { JWT_ISSUER: testIssuer, JWT_AUDIENCE: testAudience, JWT_JWKS_FILE: file }, sign: signJwt, key }
}

testOnEveryBackend(t, 'managed tokens alone: accepted, then refused once expired or revoked', async (t, database) => {
  const app = await buildTestApp(t, { DATABASE_URL: database.url, API_TOKENS: '', TOKEN_CACHE_TTL: 0 })
  const { token } = await issueManagedToken(app.app.apiTokens, { name: 'ci' })
  t.equal((await createWith(app, token)).statusCode, 200)
  t.equal((await createWith(app, testToken)).statusCode, 401, 'API_TOKENS is empty: its tokens are not accepted')

  const soon = await issueManagedToken(app.app.apiTokens, { name: 'short', expiresAt: new Date(Date.now() + 300) })
  t.equal((await createWith(app, soon.token)).statusCode, 200, 'before its expiry')
  await new Promise((resolve) => setTimeout(resolve, 400))
  assertRefused(t, await createWith(app, soon.token), 'the token has expired')

  t.equal(await app.app.apiTokens.revoke('ci', new Date()), true)
  assertRefused(t, await createWith(app, token), 'the token has been revoked')
  assertRefused(t, await createWith(app, `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`),
    'the token is mistyped or truncated: its checksum does not match')
  assertRefused(t, await createWith(app, 'ps_' + 'x'.repeat(38)), 'the token is mistyped or truncated: its checksum does not match')
  const { token: revokedBeforeUse } = await issueManagedToken(app.app.apiTokens, { name: 'gone' })
  await app.app.apiTokens.revoke('gone', new Date())
  assertRefused(t, await createWith(app, revokedBeforeUse), 'the token has been revoked')
  const unknown = await createWith(app, mintManagedToken())
  t.same([unknown.statusCode, unknown.body], [401, { error: 40102, message: 'the bearer token is not valid' }],
    'a well-formed token the store does not hold')
  t.equal(unknown.headers['www-authenticate'], 'Bearer realm="plant-store", error="invalid_token"', 'the bare challenge')
})

testOnEveryBackend(t, 'JWTs alone, from a local JWKS file', async (t, database) => {
  const { settings, key } = await jwtSetup(t)
  const app = await buildTestApp(t, { DATABASE_URL: database.url, API_TOKENS: '', ...settings })
  t.equal((await createWith(app, await signJwt(key))).statusCode, 200)
  assertRefused(t, await createWith(app, await signJwt(key, { expiresIn: -120 })), 'the token has expired')
  assertRefused(t, await createWith(app, await signJwt(key, { aud: 'another-api' })), 'the token is for another audience')
  t.equal((await createWith(app, testToken)).statusCode, 401)
})

testOnEveryBackend(t, 'all three composed: each kind accepted, and each refusal its own', async (t, database) => {
  const { settings, key } = await jwtSetup(t)
  const app = await buildTestApp(t, { DATABASE_URL: database.url, ...settings, TOKEN_CACHE_TTL: 0 })
  const { token } = await issueManagedToken(app.app.apiTokens, { name: 'deploy' })
  t.equal((await createWith(app, testToken)).statusCode, 200, 'API_TOKENS')
  t.equal((await createWith(app, token)).statusCode, 200, 'a managed token')
  t.equal((await createWith(app, await signJwt(key))).statusCode, 200, 'a JWT')

  await app.app.apiTokens.revoke('deploy', new Date())
  assertRefused(t, await createWith(app, token), 'the token has been revoked')
  assertRefused(t, await createWith(app, await signJwt(key, { expiresIn: -120 })), 'the token has expired')
  const unknown = await createWith(app, 'not-a-known-token')
  t.equal(unknown.statusCode, 401)
  t.same(unknown.body, { error: 40102, message: 'the bearer token is not valid' })
  t.equal(unknown.headers['www-authenticate'], 'Bearer realm="plant-store", error="invalid_token"', 'a token no one knows: the bare challenge, as ever')
  const malformed = await app.createPlant(plant, { authorization: 'Bearer a b' })
  t.equal(malformed.statusCode, 400)
  t.equal(malformed.headers['www-authenticate'], 'Bearer realm="plant-store", error="invalid_request"')
  const missing = await app.createPlant(plant, { authorization: '' })
  t.equal(missing.statusCode, 401)
  t.equal(missing.headers['www-authenticate'], 'Bearer realm="plant-store"')
})

t.test('an unreachable JWKS gives JWT callers a 503, and every other caller is served', async (t) => {
  const closed = createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const { port } = closed.address() as AddressInfo
  await new Promise((resolve) => closed.close(resolve))
  const key = await signingKey('key-1')
  const app = await buildTestApp(t, {
    JWT_ISSUER: testIssuer, JWT_AUDIENCE: testAudience, JWT_JWKS_URL: `http://127.0.0.1:${port}/jwks.json`, JWT_JWKS_TIMEOUT: 500,
  })
  const refused = await createWith(app, await signJwt(key))
  t.equal(refused.statusCode, 503)
  t.same(refused.body, { error: 50302, message: "the identity provider's signing keys could not be fetched; retry later" })
  t.match(refused.headers['retry-after'], /^[1-9][0-9]*$/)
  t.equal((await createWith(app, testToken)).statusCode, 200, 'an API token still works')
  const { token } = await issueManagedToken(app.app.apiTokens, { name: 'ci' })
  t.equal((await app.createPlant({ id: 2, name: 'Palm' }, { authorization: `Bearer ${token}` })).statusCode, 200, 'a managed token too')
})

t.test('the identity, not the token, is what the per-credential rate limit counts', async (t) => {
  const { settings, key } = await jwtSetup(t)
  const app = await buildTestApp(t, { ...settings, RATE_LIMIT_PER_CREDENTIAL: 2 })
  const first = await issueManagedToken(app.app.apiTokens, { name: 'first' })
  const second = await issueManagedToken(app.app.apiTokens, { name: 'second' })
  const statuses = async (token: string, count: number): Promise<number[]> => {
    const answered: number[] = []
    for (let i = 0; i < count; i++) answered.push((await createWith(app, token)).statusCode)
    return answered
  }
  t.same(await statuses(first.token, 3), [200, 200, 429], 'one managed token: its own count')
  t.same(await statuses(second.token, 2), [200, 200], 'another: a count of its own')
  t.same(await statuses(await signJwt(key, { sub: 'bob' }), 1), [200])
  t.same(await statuses(await signJwt(key, { sub: 'bob' }), 2), [200, 429], 'two JWTs with one sub are one identity')
  t.same(await statuses(await signJwt(key, { sub: 'carol' }), 1), [200], 'another sub, another identity')
})

// A lookup that was in flight when the token was revoked may have read it just before; what it
// read is trusted from when it returned.
const queryAllowanceMs = 100

testOnEveryBackend(t, 'a token revoked on one instance is refused by every instance within TOKEN_CACHE_TTL', async (t, database) => {
  const cacheTtlSeconds = 1
  const first = await buildTestApp(t, { DATABASE_URL: database.url, API_TOKENS: '', TOKEN_CACHE_TTL: cacheTtlSeconds })
  const second = await buildTestApp(t, { DATABASE_URL: database.url, API_TOKENS: '', TOKEN_CACHE_TTL: cacheTtlSeconds })
  const { token } = await issueManagedToken(first.app.apiTokens, { name: 'ci' })
  let id = 1
  const statusOn = async (app: TestApp): Promise<number> =>
    (await app.createPlant({ id: id++, name: 'Fern' }, { authorization: `Bearer ${token}` })).statusCode
  t.same([await statusOn(first), await statusOn(second)], [200, 200], 'both accept it, and have read it')

  await second.app.apiTokens.revoke('ci', new Date())
  const revokedAt = Date.now()
  const bound = revokedAt + cacheTtlSeconds * 1000
  // What a request was answered, by when it was sent: answers take longer on a loaded machine,
  // but no request sent after the bound may be accepted, on either instance.
  const answers: Array<{ sentAt: number, status: number }> = []
  const sentAfterBound = (): number => answers.filter(({ sentAt }) => sentAt > bound + queryAllowanceMs).length
  // Until a few requests were sent to each instance after the bound, however slow the machine.
  while (sentAfterBound() < 6 && Date.now() < bound + 20_000) {
    for (const app of [first, second]) {
      const sentAt = Date.now()
      answers.push({ sentAt, status: await statusOn(app) })
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const lastAccepted = Math.max(...answers.filter(({ status }) => status === 200).map(({ sentAt }) => sentAt - revokedAt))
  const afterBound = answers.filter(({ sentAt }) => sentAt > bound + queryAllowanceMs)
  t.comment(`last request accepted was sent ${lastAccepted} ms after the revocation (bound ${cacheTtlSeconds * 1000} ms)`)
  t.ok(afterBound.length >= 6, 'requests were sent to both instances after the bound')
  t.same(afterBound.filter(({ status }) => status !== 401), [], 'every request sent after the bound is refused')
})
