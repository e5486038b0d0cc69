import type { FastifyReply, FastifyRequest } from 'fastify'
import t from 'tap'
import { createApiTokenVerifier } from '../../src/auth/api-token-verifier.js'
import { BearerCredentials, notMine, type TokenVerifier } from '../../src/auth/bearer-credentials.js'
import { type Identity, identityOf } from '../../src/auth/identity.js'
import { InvalidTokenError } from '../../src/errors/credential-errors.js'

// bearerAuth alone, on hand-made requests: which identity each header authenticates as, what a
// connection's cache reuses, and which refusal wins when several verifiers are composed.

const tokens = ['first-token-0123456789', 'second-token-9876543210'] as const

type Authenticate = (authorization: string | undefined, connection?: object) => Promise<{ identity: Identity | null, error?: Error }>

// The scheme's handler in a requirement that names `roles` (none by default).
async function bearerAuthWith (verifiers: TokenVerifier[], roles: readonly string[] = []): Promise<Authenticate> {
  const handler = new BearerCredentials(verifiers).holding(roles)
  return async (authorization, connection = {}) => {
    const request = { headers: { authorization }, raw: { socket: connection }, identity: null }
    const error = await new Promise<Error | undefined>((resolve) => {
      handler(request as unknown as FastifyRequest, {} as FastifyReply, resolve)
    })
    return { identity: request.identity, ...(error === undefined || error === null ? {} : { error }) }
  }
}

t.test('each API token is an identity of its own, named without the token', async (t) => {
  const authenticate = await bearerAuthWith([createApiTokenVerifier(tokens)])
  const first = (await authenticate(`Bearer ${tokens[0]}`)).identity
  const second = (await authenticate(`Bearer ${tokens[1]}`)).identity
  t.equal(first?.key, 'api-token:1', 'named by its place in API_TOKENS')
  t.equal(second?.key, 'api-token:2')
  for (const [token, identity] of [[tokens[0], first], [tokens[1], second]] as const) {
    t.notOk(JSON.stringify(identity).includes(token.slice(0, 6)), 'no part of the token is in it')
  }
  t.equal((await authenticate(`bearer   ${tokens[0]}`)).identity?.key, first?.key, 'another spelling of the header, the same identity')
})

t.test('a refused request names no identity', async (t) => {
  const authenticate = await bearerAuthWith([createApiTokenVerifier(tokens)])
  for (const authorization of [undefined, 'Bearer unknown-token', 'Bearer', `Basic ${tokens[0]}`]) {
    const { identity, error } = await authenticate(authorization)
    t.ok(error, `${String(authorization)}: refused`)
    t.equal(identity, null, `${String(authorization)}: no identity`)
  }
})

t.test('on one connection, the cached header and a new one each name their own identity', async (t) => {
  const authenticate = await bearerAuthWith([createApiTokenVerifier(tokens)])
  const connection = {}
  const fresh = (await authenticate(`Bearer ${tokens[0]}`, connection)).identity
  const cached = (await authenticate(`Bearer ${tokens[0]}`, connection)).identity
  t.equal(cached, fresh, 'the cached header: the same identity')
  const other = (await authenticate(`Bearer ${tokens[1]}`, connection)).identity
  t.not(other?.key, fresh?.key, 'another token on that connection: its own identity, not the cached one')
  t.equal((await authenticate('Bearer unknown-token', connection)).identity, null, 'and a refused one: none')
})

t.test('a header is reused on its connection only until its verifier said it may have changed', async (t) => {
  let verified = 0
  const shortLived: TokenVerifier = (token) => {
    if (token !== 'short-lived-token') return notMine
    verified++
    return { identity: identityOf('token', 'short'), reusableUntil: Date.now() + 100 }
  }
  const authenticate = await bearerAuthWith([shortLived])
  const connection = {}
  await authenticate('Bearer short-lived-token', connection)
  await authenticate('Bearer short-lived-token', connection)
  t.equal(verified, 1, 'reused while fresh')
  await new Promise((resolve) => setTimeout(resolve, 150))
  await authenticate('Bearer short-lived-token', connection)
  t.equal(verified, 2, 'verified again once stale')
})

t.test('composed verifiers: the refusal of the verifier that knew the token wins, wherever it stands', async (t) => {
  const expiring: TokenVerifier = (token) => token.startsWith('exp_') ? new InvalidTokenError('the token has expired') : notMine
  const accepting: TokenVerifier = (token) => token === 'good'
    ? { identity: identityOf('token', 'good'), reusableUntil: Number.POSITIVE_INFINITY }
    : notMine
  for (const order of [[expiring, accepting], [accepting, expiring]]) {
    const authenticate = await bearerAuthWith(order)
    t.match((await authenticate('Bearer exp_123')).error, { statusCode: 401, message: 'the token has expired' })
    t.match((await authenticate('Bearer unknown')).error, { statusCode: 401, message: 'the bearer token is not valid' })
    t.equal((await authenticate('Bearer good')).identity?.key, 'token:good')
    t.match((await authenticate('Bearer')).error, { statusCode: 400 }, 'a malformed header is 400 whoever refuses it')
    t.match((await authenticate(undefined)).error, { statusCode: 401, code: 40101 })
  }
  const failing: TokenVerifier = async () => { throw new Error('store down') }
  const authenticate = await bearerAuthWith([failing, accepting])
  t.equal((await authenticate('Bearer good')).identity?.key, 'token:good', 'a failing verifier does not stop another from accepting')
  t.match((await authenticate('Bearer other')).error, { message: 'store down' }, 'and its failure is the answer when none accepts')
})

t.test('each requirement\'s roles are checked, on a header accepted again on its connection too', async (t) => {
  let verified = 0
  const reader: TokenVerifier = (token) => {
    if (token !== 'reader-token') return notMine
    verified++
    return { identity: identityOf('token', 'reader', new Set(['plants:read'])), reusableUntil: Number.POSITIVE_INFINITY }
  }
  const bearerAuth = new BearerCredentials([reader])
  const connection = {}
  const decide = async (roles: readonly string[]): Promise<Error | undefined> => new Promise((resolve) => {
    const request = { headers: { authorization: 'Bearer reader-token' }, raw: { socket: connection }, identity: null }
    bearerAuth.holding(roles)(request as unknown as FastifyRequest, {} as FastifyReply, resolve)
  })
  t.match(await decide(['plants:write']), { statusCode: 403, code: 40301, message: 'the token lacks a role this operation needs: plants:write' },
    'verified, and refused for the role it lacks')
  t.equal(await decide(['plants:read']), undefined, 'accepted again without verifying, for the role it holds')
  t.match(await decide(['plants:read', 'plants:write']), {
    statusCode: 403,
    headers: { 'www-authenticate': 'Bearer realm="plant-store", error="insufficient_scope", scope="plants:read plants:write"' },
  }, 'and refused again without verifying, naming every role the requirement lists')
  t.equal(await decide([]), undefined, 'a requirement that names no role')
  t.equal(verified, 1, 'verified once, the header reused after')
})
