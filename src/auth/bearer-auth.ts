import type { FastifyInstance } from 'fastify'
import { ConnectionCredentials } from './connection-credentials.js'
import { type SecurityHandler, securityHandlerOf, type TokenVerifier } from './token-verifier.js'

// The bearerAuth scheme of openapi.yaml: satisfied by any of the configured verifiers (API_TOKENS,
// the store's managed tokens, JWTs), composed by @fastify/auth in that order, cheapest first.
// A header already accepted on the connection is accepted again before any of them runs.
// Refusals follow RFC 6750 whichever verifier refuses: 401 with a challenge when the token is
// missing or not valid (error="invalid_token" and an error_description), 400 when the header is
// malformed.
export function createBearerAuth (auth: FastifyInstance['auth'], verifiers: readonly TokenVerifier[]): SecurityHandler {
  if (verifiers.length === 0) throw new Error('bearer authentication needs at least one verifier')
  const connections = new ConnectionCredentials()
  const anyVerifier: SecurityHandler = auth(verifiers.map((verify) => securityHandlerOf(verify, connections)), { relation: 'or' })
  return function bearerAuth (request, reply, done) {
    if (connections.reuse(request)) done()
    else anyVerifier(request, reply, done)
  }
}
