import t, { type Test } from 'tap'
import { createJwtVerifier, type JwtVerifier } from '../../src/auth/jwt/jwt-verifier.js'
import { JwksFetchError } from '../../src/auth/jwt/key-set.js'
import { ErrorCode } from '../../src/errors/api-errors.js'
import { IdentityProviderUnavailableError, InvalidTokenError } from '../../src/errors/credential-errors.js'
import { freePort } from '../support/free-port.js'
import { type JwksServer, startJwksServer } from '../support/jwks-server.js'
import { createSigningKey, keySetOf, settingsWith, signToken, testClock } from '../support/signing-keys.js'

// JWT_JWKS_URL: the keys are fetched when first needed, kept 10 minutes, fetched again for a kid
// they lack unless they are less than 5 seconds old, shared by concurrent callers; a JWKS that
// cannot be fetched refuses JWT callers with a 503, fast, and never lets a token through.

const keyA = await createSigningKey('ES256', 'key-a')
const keyB = await createSigningKey('ES256', 'key-b')

async function remoteVerifier (t: Test, server: { url: string }, jwksTimeoutMs = 1000) {
  // jose ages the keys on Date.now: the test's clock stands in for it until the test ends.
  const clock = testClock()
  const systemNow = Date.now
  Date.now = clock.now
  t.teardown(() => { Date.now = systemNow })
  const failures: unknown[] = []
  const verifier = await createJwtVerifier(settingsWith({ jwksUrl: server.url }, { jwksTimeoutMs }), {
    now: clock.now,
    onKeysUnavailable: (error) => { failures.push(error) },
  })
  const tokenOf = (key = keyA) => signToken(key, { nowSeconds: clock.seconds() })
  return { verifier, clock, failures, tokenOf }
}

async function refusalOf (verifier: JwtVerifier, token: string): Promise<unknown> {
  return verifier.verify(token).then(() => undefined, (error: unknown) => error)
}

function assertUnavailable (t: Test, error: unknown, message: string): void {
  t.ok(error instanceof IdentityProviderUnavailableError, `${message}: a 503`)
  if (!(error instanceof IdentityProviderUnavailableError)) return
  t.equal(error.statusCode, 503)
  t.equal(error.code, ErrorCode.identityProviderUnavailable)
  const retryAfter = Number(error.headers['retry-after'])
  t.ok(retryAfter >= 1 && retryAfter <= 5, `Retry-After ${retryAfter} s`)
}

async function timed<T> (work: () => Promise<T>): Promise<{ result: T, ms: number }> {
  const start = performance.now()
  const result = await work()
  return { result, ms: performance.now() - start }
}

t.test('nothing is fetched before the first token or warmUp, then once for 10 minutes', async (t) => {
  const server = await startJwksServer(t, keySetOf(keyA))
  const { verifier, clock, tokenOf } = await remoteVerifier(t, server)
  t.equal(server.fetches, 0, 'created without fetching')
  await verifier.warmUp()
  t.equal(server.fetches, 1, 'warmUp fetched')
  for (let i = 0; i < 5; i++) await verifier.verify(await tokenOf())
  clock.ms += 10 * 60_000 - 1
  await verifier.verify(await tokenOf())
  t.equal(server.fetches, 1, 'the keys served for 10 minutes')
  clock.ms += 1
  await verifier.verify(await tokenOf())
  t.equal(server.fetches, 2, 'then were fetched again')
})

t.test('concurrent callers share one fetch', async (t) => {
  const server = await startJwksServer(t, keySetOf(keyA))
  const { verifier, clock, tokenOf } = await remoteVerifier(t, server)
  const token = await tokenOf()
  const verified = await Promise.all(Array.from({ length: 20 }, () => verifier.verify(token)))
  t.equal(verified.length, 20)
  t.equal(server.fetches, 1)
  server.publish(keySetOf(keyA, keyB))
  clock.ms += 5000
  const rotated = await tokenOf(keyB)
  await Promise.all(Array.from({ length: 20 }, () => verifier.verify(rotated)))
  t.equal(server.fetches, 2, 'and twenty tokens of a new kid, one refetch')
})

t.test('a key rotation is seen at the first token of the new kid', async (t) => {
  const server = await startJwksServer(t, keySetOf(keyA))
  const { verifier, clock, tokenOf } = await remoteVerifier(t, server)
  t.equal((await verifier.verify(await tokenOf(keyA))).subject, 'alice', 'key A')
  server.publish(keySetOf(keyB))
  clock.ms += 5000
  t.equal((await verifier.verify(await tokenOf(keyB))).subject, 'alice', 'key B, published since the keys were fetched')
  t.equal(server.fetches, 2, 'exactly one more fetch')
  t.ok(await refusalOf(verifier, await tokenOf(keyA)) instanceof InvalidTokenError, 'key A, withdrawn, is refused')
})

t.test('unknown kids fetch the keys again at most once per 5 seconds', async (t) => {
  const server = await startJwksServer(t, keySetOf(keyA))
  const { verifier, clock, tokenOf } = await remoteVerifier(t, server)
  await verifier.warmUp()
  const unknown = await tokenOf({ ...keyB, kid: 'random-1' })
  const refuseTenWithinASecond = async (when: string) => {
    for (let i = 0; i < 10; i++) {
      const error = await refusalOf(verifier, unknown)
      t.equal(error instanceof InvalidTokenError && error.message, 'no signing key matches the token', `${when}, try ${i + 1}`)
      clock.ms += 100
    }
  }
  await refuseTenWithinASecond('in the 5 s after the keys were fetched')
  t.equal(server.fetches, 1, 'no refetch for keys less than 5 s old')
  clock.ms += 4000
  await refuseTenWithinASecond('5 s after')
  t.equal(server.fetches, 2, 'then one refetch for ten unknown-kid tokens within a second')
  server.publish(keySetOf(keyA, keyB))
  clock.ms += 2000
  t.ok(await refusalOf(verifier, await tokenOf(keyB)) instanceof InvalidTokenError,
    'a real new key 3 s after the refetch waits for the 5 s')
  t.equal(server.fetches, 2)
  clock.ms += 2000
  t.equal((await verifier.verify(await tokenOf(keyB))).subject, 'alice', '5 s after the refetch, it is accepted')
  t.equal(server.fetches, 3)
})

t.test('a kid unknown to keys fetched for that very token does not fetch them twice', async (t) => {
  const server = await startJwksServer(t, keySetOf(keyA))
  const { verifier, tokenOf } = await remoteVerifier(t, server)
  const error = await refusalOf(verifier, await tokenOf(keyB))
  t.equal(error instanceof InvalidTokenError && error.message, 'no signing key matches the token')
  t.equal(server.fetches, 1)
})

t.test('an unreachable JWKS gives 503s, fast during the backoff, and recovers', async (t) => {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}/.well-known/jwks.json`
  const { verifier, clock, failures, tokenOf } = await remoteVerifier(t, { url })
  await verifier.warmUp()
  t.equal(failures.length, 1, 'warmUp reported the failure and did not reject')
  assertUnavailable(t, await refusalOf(verifier, await tokenOf()), 'within the backoff')
  clock.ms += 1000
  assertUnavailable(t, await refusalOf(verifier, await tokenOf()), 'after the backoff, a new fetch fails')
  t.equal(failures.length, 2, 'each failed fetch reported once')
  t.ok(failures.every((failure) => failure instanceof JwksFetchError && /JWT_JWKS_URL could not be reached \(.*ECONNREFUSED/.test(failure.message)),
    String(failures[0]))
  const server = await startJwksServer(t, keySetOf(keyA), port)
  assertUnavailable(t, await refusalOf(verifier, await tokenOf()), 'still within the backoff once it is back')
  t.equal(server.fetches, 0, 'the backoff asked nothing')
  clock.ms += 1000
  t.equal((await verifier.verify(await tokenOf())).subject, 'alice', 'recovered')
  t.equal(server.fetches, 1)
})

t.test('a JWKS that does not answer gives a 503 after the timeout, then 503s at once', async (t) => {
  const server = await startJwksServer(t, keySetOf(keyA))
  server.answerWith(() => {})
  const { verifier, failures, tokenOf } = await remoteVerifier(t, server, 300)
  const token = await tokenOf()
  const first = await timed(() => refusalOf(verifier, token))
  assertUnavailable(t, first.result, 'the first token')
  t.ok(first.ms >= 250 && first.ms < 2000, `refused after ${Math.round(first.ms)} ms, the timeout being 300 ms`)
  t.match(String(failures[0]), /did not answer within 300 ms/)
  const during = await timed(() => Promise.all(Array.from({ length: 10 }, () => refusalOf(verifier, token))))
  for (const error of during.result) assertUnavailable(t, error, 'during the backoff')
  t.ok(during.ms < 250, `ten refused in ${Math.round(during.ms)} ms during the backoff, none waiting out the 300 ms timeout`)
  t.equal(server.fetches, 1, 'without asking again')
})

t.test('an answer that is not a 200 with a JWKS gives a 503', async (t) => {
  const answers: Array<[string, Parameters<JwksServer['answerWith']>[0], RegExp]> = [
    ['a 500', (_, response) => { response.writeHead(500).end('{"keys":[]}') }, /answered 500, not 200/],
    ['a redirect', (_, response) => { response.writeHead(302, { location: 'http://127.0.0.1:9/' }).end() }, /answered 302/],
    ['HTML', (_, response) => { response.writeHead(200, { 'content-type': 'text/html' }).end('<html>') }, /not JSON/],
    ['JSON that is not a JWKS', (_, response) => { response.writeHead(200).end('{"keys":"none"}') }, /not a JWKS/],
    ['a JSON array', (_, response) => { response.writeHead(200).end('[]') }, /not a JWKS/],
  ]
  for (const [what, answer, reason] of answers) {
    const server = await startJwksServer(t, keySetOf(keyA))
    server.answerWith(answer)
    const { verifier, failures, tokenOf } = await remoteVerifier(t, server)
    assertUnavailable(t, await refusalOf(verifier, await tokenOf()), what)
    t.match(String(failures[0]), reason, `${what}: reported`)
  }
})

t.test('fresh keys keep serving while the JWKS is down; keys older than 10 minutes do not', async (t) => {
  const server = await startJwksServer(t, keySetOf(keyA))
  const { verifier, clock, tokenOf } = await remoteVerifier(t, server)
  await verifier.warmUp()
  await server.close()
  clock.ms += 9 * 60_000
  t.equal((await verifier.verify(await tokenOf())).subject, 'alice', 'known kid, keys 9 minutes old')
  assertUnavailable(t, await refusalOf(verifier, await tokenOf(keyB)), 'an unknown kid needs a fetch')
  clock.ms += 60_000
  assertUnavailable(t, await refusalOf(verifier, await tokenOf()), 'known kid, keys 10 minutes old')
})
