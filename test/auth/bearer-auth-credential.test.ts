import type { FastifyReply, FastifyRequest } from 'fastify'
import t from 'tap'
import { createBearerAuth } from '../../src/auth/bearer-auth.js'
import type { Credential } from '../../src/auth/credential.js'

// The credential bearerAuth names for an accepted request: one per token, the same however the
// header is spelt and whether or not the connection's cache answered, and never the token.

const tokens = ['first-token-0123456789', 'second-token-9876543210'] as const
const bearerAuth = createBearerAuth(tokens)

// What bearerAuth sets on a request sent on `connection` with this Authorization header.
function authenticate (authorization: string | undefined, connection: object = {}): { credential: Credential | null, error?: Error } {
  const request = { headers: { authorization }, raw: { socket: connection }, credential: null }
  let refusal: Error | undefined
  bearerAuth(request as unknown as FastifyRequest, {} as FastifyReply, (error) => { refusal = error })
  return { credential: request.credential, ...(refusal === undefined ? {} : { error: refusal }) }
}

t.test('each accepted token is a credential of its own, named without the token', async (t) => {
  const first = authenticate(`Bearer ${tokens[0]}`).credential
  const second = authenticate(`Bearer ${tokens[1]}`).credential
  t.match(first?.id, /^[0-9a-f]{16}$/)
  t.match(second?.id, /^[0-9a-f]{16}$/)
  t.not(first?.id, second?.id)
  for (const [token, credential] of [[tokens[0], first], [tokens[1], second]] as const) {
    t.notOk(JSON.stringify(credential).includes(token.slice(0, 6)), 'no part of the token is in it')
  }
  t.equal(authenticate(`bearer   ${tokens[0]}`).credential?.id, first?.id, 'another spelling of the header, the same credential')
})

t.test('a refused request names no credential', async (t) => {
  for (const authorization of [undefined, 'Bearer unknown-token', 'Bearer', `Basic ${tokens[0]}`]) {
    const { credential, error } = authenticate(authorization)
    t.ok(error, `${String(authorization)}: refused`)
    t.equal(credential, null, `${String(authorization)}: no credential`)
  }
})

t.test('on one connection, the cached header and a new one each name their own credential', async (t) => {
  const connection = {}
  const fresh = authenticate(`Bearer ${tokens[0]}`, connection).credential
  const cached = authenticate(`Bearer ${tokens[0]}`, connection).credential
  t.equal(cached, fresh, 'the cached header: the same credential')
  const other = authenticate(`Bearer ${tokens[1]}`, connection).credential
  t.not(other?.id, fresh?.id, 'another token on that connection: its own credential, not the cached one')
  t.equal(authenticate('Bearer unknown-token', connection).credential, null, 'and a refused one: none')
})
