import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { exportJWK } from 'jose'
import t from 'tap'
import { createJwtVerifier } from '../../src/auth/jwt/jwt-verifier.js'
import { ConfigError } from '../../src/config/config.js'
import { InvalidTokenError } from '../../src/errors/credential-errors.js'
import { createSigningKey, keySetOf, settingsWith, signToken, testClock } from '../support/signing-keys.js'

// JWT_JWKS_FILE: read once when the verifier is created; a file that cannot serve stops start-up
// with a message naming the setting.

const rsaKey = await createSigningKey('RS256', 'file-rsa')
const edKey = await createSigningKey('EdDSA', 'file-ed')

t.test('the keys of a JWKS file verify tokens', async (t) => {
  const jwksFile = join(t.testdir({ 'jwks.json': JSON.stringify(keySetOf(rsaKey, edKey)) }), 'jwks.json')
  const clock = testClock()
  const verifier = await createJwtVerifier(settingsWith({ jwksFile }), { now: clock.now })
  await verifier.warmUp()
  for (const key of [rsaKey, edKey]) {
    t.equal((await verifier.verify(await signToken(key, { nowSeconds: clock.seconds() }))).subject, 'alice', key.alg)
  }
  const other = await createSigningKey('RS256', 'not-in-the-file')
  const error = await verifier.verify(await signToken(other, { nowSeconds: clock.seconds() })).catch((error: unknown) => error)
  t.equal(error instanceof InvalidTokenError && error.message, 'no signing key matches the token', 'a key not in the file')
})

t.test('a JWKS file that cannot serve stops creation, naming JWT_JWKS_FILE', async (t) => {
  const folder = t.testdir({
    'not-json.json': '{"keys": [',
    'not-a-key-set.json': JSON.stringify({ keys: 'none' }),
    'one-key.json': JSON.stringify(rsaKey.publicJwk),
    'private.json': JSON.stringify({ keys: [{ ...await exportJWK(rsaKey.privateKey), kid: 'file-rsa' }] }),
  })
  const cases = [
    ['missing.json', /JWT_JWKS_FILE=".*missing\.json" could not be read \(ENOENT/],
    ['not-json.json', /JWT_JWKS_FILE=".*not-json\.json" is not JSON/],
    ['not-a-key-set.json', /JWT_JWKS_FILE=".*not-a-key-set\.json" is not a JWKS/],
    ['one-key.json', /JWT_JWKS_FILE=".*one-key\.json" is not a JWKS/],
    ['private.json', /JWT_JWKS_FILE=".*private\.json" holds a private key/],
  ] as const
  for (const [file, message] of cases) {
    const created = createJwtVerifier(settingsWith({ jwksFile: join(folder, file) }))
    const error = await created.catch((error: unknown) => error)
    t.ok(error instanceof ConfigError, `${file}: a configuration error`)
    t.match(String((error as Error).message), message, file)
  }
})

t.test('the file is read once: changing it later changes nothing', async (t) => {
  const folder = t.testdir({ 'jwks.json': JSON.stringify(keySetOf(rsaKey)) })
  const clock = testClock()
  const verifier = await createJwtVerifier(settingsWith({ jwksFile: join(folder, 'jwks.json') }), { now: clock.now })
  writeFileSync(join(folder, 'jwks.json'), '{}')
  t.ok(await verifier.verify(await signToken(rsaKey, { nowSeconds: clock.seconds() })))
})
