import { CompactSign, exportSPKI, SignJWT } from 'jose'
import t, { type Test } from 'tap'
import { createJwtVerifier, type JwtVerifier, looksLikeJwt } from '../../src/auth/jwt/jwt-verifier.js'
import { ErrorCode } from '../../src/errors/api-errors.js'
import { InvalidTokenError } from '../../src/errors/credential-errors.js'
import { startJwksServer } from '../support/jwks-server.js'
import {
  audience, createSigningKey, encodeJson, handMadeToken, issuer, keySetOf, settingsWith, signToken, testClock,
} from '../support/signing-keys.js'

// What a JWT must be to be accepted: signed by a key of the identity provider's JWKS with an
// accepted algorithm, from its issuer, for this service, within its times, naming a subject. Each
// refusal says why, without a double quote or any part of the token.

const rsaKey = await createSigningKey('RS256', 'rsa-1')
const ecKey = await createSigningKey('ES256', 'ec-1')
const edKey = await createSigningKey('EdDSA', 'ed-1')
const strangerKey = await createSigningKey('RS256', 'rsa-1')

async function verifierFor (t: Test, overrides: Parameters<typeof settingsWith>[1] = {}) {
  const server = await startJwksServer(t, keySetOf(rsaKey, ecKey, edKey))
  const clock = testClock()
  const verifier = await createJwtVerifier(settingsWith({ jwksUrl: server.url }, overrides), { now: clock.now })
  return { verifier, clock, server }
}

// The token must be refused as invalid, with this description, and nothing of it may show.
async function assertRefused (t: Test, verifier: JwtVerifier, token: string, description: string): Promise<void> {
  const error = await verifier.verify(token).then(() => undefined, (error: unknown) => error)
  if (!(error instanceof InvalidTokenError)) {
    t.fail(`${description}: refused with ${String(error)} instead`)
    return
  }
  t.same([error.statusCode, error.code, error.message], [401, ErrorCode.invalidToken, description], description)
  const shown = `${error.message} ${error.headers['www-authenticate']}`
  t.notOk(/\\/.test(error.message) || error.message.includes('"'), 'no double quote nor backslash in the description')
  const leaked = token.split('.').filter((part) => part.length >= 4 && shown.includes(part))
  t.same(leaked, [], 'no part of the token in the answer')
}

t.test('looksLikeJwt takes three base64url parts for a JWT, and nothing else', async (t) => {
  const token = await signToken(rsaKey, { nowSeconds: 0 })
  t.ok(looksLikeJwt(token), 'a signed JWT')
  t.ok(looksLikeJwt(handMadeToken({ alg: 'none' }, { sub: 'x' })), 'an unsigned one (alg none), refused later for its algorithm')
  for (const other of ['ps_0123456789abcdefABCDEF0123456789abcdef', 'configured-token', 'a.b', 'a.b.c.d', '.b.c', 'a..c',
    'a+b.c.d', 'a/b.c.d', 'YQ==.Yg.Yw', '', `${token} `]) {
    t.notOk(looksLikeJwt(other), JSON.stringify(other))
  }
})

t.test('a valid RS256, ES256 or EdDSA token gives its subject and expiry', async (t) => {
  const { verifier, clock } = await verifierFor(t)
  for (const key of [rsaKey, ecKey, edKey]) {
    const token = await signToken(key, { nowSeconds: clock.seconds(), claims: { sub: `user-of-${key.alg}` } })
    t.same(await verifier.verify(token), { subject: `user-of-${key.alg}`, roles: [], expiresAtMs: (clock.seconds() + 300) * 1000 }, key.alg)
  }
})

t.test('a token grants the roles of its scope claim (RFC 9068), or else of its scp', async (t) => {
  const { verifier, clock } = await verifierFor(t)
  const rolesOf = async (claims: Record<string, unknown>): Promise<readonly string[]> =>
    (await verifier.verify(await signToken(ecKey, { nowSeconds: clock.seconds(), claims }))).roles
  t.same(await rolesOf({ scope: 'plants:read  openid plants:write' }), ['plants:read', 'openid', 'plants:write'], 'space-separated')
  t.same(await rolesOf({ scp: ['plants:read', 'plants:write'] }), ['plants:read', 'plants:write'], 'an array')
  t.same(await rolesOf({ scp: 'plants:read plants:write' }), ['plants:read', 'plants:write'], 'scp as a string, as some providers write it')
  t.same(await rolesOf({ scope: 'plants:read', scp: ['plants:write'] }), ['plants:read'], 'scope when both are there')
  t.same(await rolesOf({}), [], 'none without either')
  t.same(await rolesOf({ scope: 42, scp: [7, 'plants:read'] }), ['plants:read'], 'what is not a string grants nothing')
})

t.test('a token without a kid is checked with the one key of its algorithm, and refused when several match', async (t) => {
  const { verifier, clock } = await verifierFor(t)
  const token = await signToken(ecKey, { nowSeconds: clock.seconds(), withKid: false })
  t.equal((await verifier.verify(token)).subject, 'alice', 'one EC key: accepted')
  const { verifier: twoRsaKeys, server } = await verifierFor(t)
  server.publish(keySetOf(rsaKey, { ...strangerKey, publicJwk: { ...strangerKey.publicJwk, kid: 'rsa-2' } }))
  await assertRefused(t, twoRsaKeys, await signToken(rsaKey, { nowSeconds: clock.seconds(), withKid: false }),
    'several signing keys match the token')
})

t.test('expiry and not-before are checked with the clock tolerance, 30 seconds here', async (t) => {
  const { verifier, clock } = await verifierFor(t)
  const now = clock.seconds()
  await assertRefused(t, verifier, await signToken(rsaKey, { nowSeconds: now - 3600, claims: { exp: now - 31 } }), 'the token has expired')
  t.ok(await verifier.verify(await signToken(rsaKey, { nowSeconds: now - 3600, claims: { exp: now - 29 } })), 'expired 29 s ago: still accepted')
  await assertRefused(t, verifier, await signToken(rsaKey, { nowSeconds: now, claims: { nbf: now + 31 } }), 'the token is not valid yet')
  t.ok(await verifier.verify(await signToken(rsaKey, { nowSeconds: now, claims: { nbf: now + 29 } })), 'valid in 29 s: already accepted')
  clock.ms += 3600_000
  await assertRefused(t, verifier, await signToken(rsaKey, { nowSeconds: now }), 'the token has expired')
})

t.test('a token of another issuer or for another audience is refused', async (t) => {
  const { verifier, clock } = await verifierFor(t)
  const nowSeconds = clock.seconds()
  await assertRefused(t, verifier, await signToken(rsaKey, { nowSeconds, claims: { iss: 'https://other.example.test/' } }),
    'the token was issued by another issuer')
  await assertRefused(t, verifier, await signToken(rsaKey, { nowSeconds, claims: { iss: undefined } }), 'the token names no issuer')
  await assertRefused(t, verifier, await signToken(rsaKey, { nowSeconds, claims: { aud: 'another-service' } }),
    'the token is for another audience')
  await assertRefused(t, verifier, await signToken(rsaKey, { nowSeconds, claims: { aud: undefined } }), 'the token names no audience')
  const forSeveral = await signToken(rsaKey, { nowSeconds, claims: { aud: ['another-service', audience] } })
  t.equal((await verifier.verify(forSeveral)).subject, 'alice', 'an audience list that holds this service is accepted')
})

t.test('a token must name a subject and an expiry', async (t) => {
  const { verifier, clock } = await verifierFor(t)
  const nowSeconds = clock.seconds()
  await assertRefused(t, verifier, await signToken(rsaKey, { nowSeconds, claims: { sub: undefined } }), 'the token names no subject')
  await assertRefused(t, verifier, await signToken(rsaKey, { nowSeconds, claims: { sub: '' } }), 'the token names no subject')
  await assertRefused(t, verifier, await signToken(rsaKey, { nowSeconds, claims: { sub: 42 } }), 'the token names no subject')
  await assertRefused(t, verifier, await signToken(rsaKey, { nowSeconds, claims: { exp: undefined } }), 'the token has no expiry')
  await assertRefused(t, verifier, await signToken(rsaKey, { nowSeconds, claims: { exp: 'tomorrow' } }), 'the token expiry is not a number')
})

t.test('an unsigned token (alg none) is refused, with or without a kid', async (t) => {
  const { verifier, clock } = await verifierFor(t)
  const payload = { iss: issuer, aud: audience, sub: 'mallory', exp: clock.seconds() + 300 }
  for (const header of [{ alg: 'none' }, { alg: 'none', typ: 'JWT', kid: rsaKey.kid }, { alg: 'None' }]) {
    await assertRefused(t, verifier, handMadeToken(header, payload), 'the token is signed with an algorithm this service does not accept')
  }
  await assertRefused(t, verifier, handMadeToken({ typ: 'JWT' }, payload), 'the token is not a well-formed JWT')
})

t.test('an HMAC token whose secret is the public key is refused, even with an HMAC key in the JWKS', async (t) => {
  const { verifier, clock, server } = await verifierFor(t)
  const claims = { iss: issuer, aud: audience, sub: 'mallory', exp: clock.seconds() + 300 }
  const secrets = [await exportSPKI(rsaKey.publicKey), JSON.stringify(rsaKey.publicJwk), rsaKey.publicJwk.n ?? '']
  for (const secret of secrets) {
    for (const alg of ['HS256', 'HS512']) {
      const token = await new SignJWT(claims).setProtectedHeader({ alg, kid: rsaKey.kid }).sign(new TextEncoder().encode(secret))
      await assertRefused(t, verifier, token, 'the token is signed with an algorithm this service does not accept')
    }
  }
  const secret = new TextEncoder().encode('a shared secret that is in the JWKS')
  server.publish({ keys: [...keySetOf(rsaKey).keys, { kty: 'oct', kid: 'hmac-1', k: Buffer.from(secret).toString('base64url') }] })
  const token = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: 'hmac-1' }).sign(secret)
  await assertRefused(t, verifier, token, 'the token is signed with an algorithm this service does not accept')
})

t.test('an algorithm left out of JWT_ALGORITHMS is refused, and HMAC or none cannot be allowed', async (t) => {
  const { verifier, clock } = await verifierFor(t, { algorithms: ['ES256'] })
  await assertRefused(t, verifier, await signToken(rsaKey, { nowSeconds: clock.seconds() }),
    'the token is signed with an algorithm this service does not accept')
  t.ok(await verifier.verify(await signToken(ecKey, { nowSeconds: clock.seconds() })), 'ES256 is accepted')
  for (const algorithms of [['HS256'], ['RS256', 'none'], ['RS256', 'HS512']]) {
    await t.rejects(createJwtVerifier(settingsWith({ jwksUrl: 'http://127.0.0.1:9/jwks' }, { algorithms })),
      /JWT_ALGORITHMS must name only asymmetric algorithms .*, not (HS256|none|HS512)$/, JSON.stringify(algorithms))
  }
  await t.rejects(createJwtVerifier(settingsWith({ jwksUrl: 'http://127.0.0.1:9/jwks' }, { algorithms: [] })),
    /JWT_ALGORITHMS must name at least one algorithm/)
})

t.test('a token with a wrong signature, or signed by a key the JWKS lacks, is refused', async (t) => {
  const { verifier, clock } = await verifierFor(t)
  const nowSeconds = clock.seconds()
  const [header, , signature] = (await signToken(rsaKey, { nowSeconds })).split('.')
  const otherPayload = encodeJson({ iss: issuer, aud: audience, sub: 'mallory', exp: nowSeconds + 300 })
  await assertRefused(t, verifier, `${header}.${otherPayload}.${signature}`, 'the token signature is not valid')
  await assertRefused(t, verifier, await signToken(strangerKey, { nowSeconds }), 'the token signature is not valid')
  await assertRefused(t, verifier, await signToken({ ...strangerKey, kid: 'rsa-unknown' }, { nowSeconds }), 'no signing key matches the token')
})

t.test('a 10 KB token is checked like any other: accepted when signed, refused when garbage', async (t) => {
  const { verifier, clock } = await verifierFor(t)
  const roles = Array.from({ length: 500 }, (_, index) => `plants:role-${index}`)
  const large = await signToken(rsaKey, { nowSeconds: clock.seconds(), claims: { roles } })
  t.ok(large.length > 10_000 && large.length < 16_384, `${large.length} characters, under the 16 KB header limit`)
  t.equal((await verifier.verify(large)).subject, 'alice')
  const garbage = ['A'.repeat(5000), 'B'.repeat(5000), 'C'.repeat(500)].join('.')
  t.ok(looksLikeJwt(garbage), 'the garbage is in the shape of a JWT')
  await assertRefused(t, verifier, garbage, 'the token is not a well-formed JWT')
})

t.test('garbage is refused as not a well-formed JWT', async (t) => {
  const { verifier, clock } = await verifierFor(t)
  const header = encodeJson({ alg: 'RS256', kid: rsaKey.kid })
  const payload = encodeJson({ iss: issuer, aud: audience, sub: 'alice', exp: clock.seconds() + 300 })
  const garbage = ['a.b.c', 'not-a-jwt', `${header}.${payload}`, `${header}.${payload}.c.d`, `${header}.${payload}.!!!`,
    `${encodeJson([1, 2])}.${payload}.c2lnbmF0dXJl`, `${Buffer.from('{"alg":').toString('base64url')}.${payload}.c2ln`,
    `e30.${payload}.c2lnbmF0dXJl`]
  for (const token of garbage) await assertRefused(t, verifier, token, 'the token is not a well-formed JWT')
  for (const notAnObject of ['[1,2]', '"alice"', 'null', 'not json']) {
    const token = await new CompactSign(new TextEncoder().encode(notAnObject))
      .setProtectedHeader({ alg: 'RS256', kid: rsaKey.kid }).sign(rsaKey.privateKey)
    await assertRefused(t, verifier, token, 'the token is not a well-formed JWT')
  }
})
