import type { FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, InvalidTokenError } from '../errors/api-errors.js'
import { bearerTokenOf } from './bearer-token.js'
import type { ConnectionCredentials } from './connection-credentials.js'
import type { Identity } from './identity.js'

// A callback, as @fastify/auth accepts: an async handler would cost a promise per request.
export type SecurityHandler = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void

export interface AcceptedToken {
  readonly identity: Identity
  // Until when (ms since the epoch) the same Authorization header may be accepted again on the
  // same connection without asking this verifier: Infinity for a token that cannot change.
  readonly reusableUntil: number
}

// The token is not of this verifier's kind (not one of its tokens, not its format): another
// verifier may accept it.
export const notMine = Symbol('not this verifier\'s token')

export type TokenVerdict = AcceptedToken | ApiError | typeof notMine

// One way of accepting a bearer token (API_TOKENS, the store's managed tokens, JWTs). It answers
// at once when it can; a rejection (the store unavailable, say) refuses the request.
export type TokenVerifier = (token: string) => TokenVerdict | Promise<TokenVerdict>

// The most telling refusal so far of each request being authenticated. @fastify/auth answers a
// request that every verifier refused with the last verifier's error, so a verifier that does
// not know a token repeats the refusal of one that did ("the token has expired") instead of a
// vaguer one of its own. Only requests some verifier refused are in it, and only until they are
// collected with their request.
const refusals = new WeakMap<FastifyRequest, Error>()

// A verifier as the security handler @fastify/auth composes: it reads the header, and on success
// sets request.identity and remembers the header on the connection.
export function securityHandlerOf (verify: TokenVerifier, connections: ConnectionCredentials): SecurityHandler {
  return function verifyBearerToken (request, _reply, done) {
    const authorization = request.headers.authorization
    const token = bearerTokenOf(authorization)
    if (token instanceof ApiError) {
      done(token)
      return
    }
    const settle = (verdict: TokenVerdict): void => {
      if (verdict === notMine) {
        done(refusals.get(request) ?? new InvalidTokenError())
      } else if (verdict instanceof ApiError) {
        refuse(verdict)
      } else {
        request.identity = verdict.identity
        connections.remember(request, authorization as string, verdict)
        done()
      }
    }
    const refuse = (error: unknown): void => {
      const refusal = error instanceof Error ? error : new Error(String(error))
      refusals.set(request, refusal)
      done(refusal)
    }
    let verdict: TokenVerdict | Promise<TokenVerdict>
    try {
      verdict = verify(token)
    } catch (error) {
      refuse(error)
      return
    }
    if (verdict instanceof Promise) {
      // Whatever answering the request throws is the request's failure, never an unhandled
      // rejection that would end the process.
      verdict.then(settle, refuse).catch((error: unknown) => request.log.error({ err: error }, 'authentication failed unexpectedly'))
    } else {
      settle(verdict)
    }
  }
}
