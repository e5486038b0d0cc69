import { timingSafeEqual } from 'node:crypto'
import type { Socket } from 'node:net'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { token68 } from '../config/token68.js'
import { ApiError } from '../errors/api-errors.js'
import {
  InsufficientScopeError, InvalidTokenError, MalformedCredentialsError, MissingCredentialsError,
} from '../errors/credential-errors.js'
import { holdsRoles, type Identity } from './identity.js'

export interface AcceptedToken {
  readonly identity: Identity
  // Until when (ms since the epoch) the same Authorization header may be accepted again on the
  // same connection without asking this verifier: Infinity for a token that cannot change.
  readonly reusableUntil: number
}

// The token is not of this verifier's kind (not one of its tokens, not its format): another
// verifier may accept it.
export const notMine = Symbol('not this verifier\'s token')

// An accepted token or an ApiError is definitive: the verifier knew the token.
export type TokenVerdict = AcceptedToken | ApiError | typeof notMine

// One way of accepting a bearer token (API_TOKENS, the store's managed tokens, JWTs). It answers
// at once when it can. A failure (a store that cannot be reached, say) is no verdict on the token.
export type TokenVerifier = (token: string) => TokenVerdict | Promise<TokenVerdict>

// Called once a request's credentials are decided: with nothing when they are accepted (and
// request.identity is set), or with the failure to answer.
export type Decided = (failure?: Error) => void

// A scheme of one security requirement, as @fastify/auth composes it: an onRequest step with a
// callback (a promise per request would cost more than the check).
export type SchemeHandler = (request: FastifyRequest, reply: FastifyReply, decided: Decided) => void

interface AcceptedHeader {
  readonly header: Buffer
  readonly accepted: AcceptedToken
}

// A bearer security scheme: its verifiers (API_TOKENS, managed tokens, JWTs, or METRICS_TOKEN),
// asked in order, cheapest first, until one gives a verdict, and the Authorization header last
// accepted on each connection. Refusals follow RFC 6750 whichever verifier refuses: 401 with a
// challenge when the token is missing or not valid, 400 when the header is malformed, 403 when a
// valid token lacks a role the requirement names.
export class BearerCredentials {
  readonly #verifiers: readonly TokenVerifier[]
  readonly #acceptedOnConnection = new WeakMap<Socket, AcceptedHeader>()

  constructor (verifiers: readonly TokenVerifier[]) {
    if (verifiers.length === 0) throw new Error('a bearer scheme needs at least one verifier')
    this.#verifiers = verifiers
  }

  // The scheme in a requirement that names `roles`: the credentials are decided first, then
  // every one of the roles must be held.
  holding (roles: readonly string[]): SchemeHandler {
    return (request, _reply, decided) => { this.#check(request, roles, decided) }
  }

  #check (request: FastifyRequest, roles: readonly string[], decided: Decided): void {
    const authorization = request.headers.authorization
    if (authorization !== undefined) {
      const reused = this.#reused(request, authorization)
      if (reused !== undefined) {
        decided(refusalOfRoles(reused, roles))
        return
      }
    }
    const token = bearerTokenOf(authorization)
    if (token instanceof ApiError) decided(token)
    else this.#ask(0, token, request, roles, undefined, decided)
  }

  // Asks the verifiers from `first` on. An acceptance or a refusal is the verdict; a verifier
  // that does not know the token, or that failed (its store unreachable), leaves it to the next,
  // and a failure is the answer when none of them knows the token.
  #ask (first: number, token: string, request: FastifyRequest, roles: readonly string[], failure: unknown, decided: Decided): void {
    for (let index = first; index < this.#verifiers.length; index++) {
      let verdict: TokenVerdict | Promise<TokenVerdict>
      try {
        verdict = this.#verifiers[index]!(token)
      } catch (error) {
        failure = error
        continue
      }
      if (verdict instanceof Promise) {
        verdict.then(
          (settled) => {
            if (settled === notMine) this.#ask(index + 1, token, request, roles, failure, decided)
            else this.#decide(settled, request, roles, decided)
          },
          (error: unknown) => this.#ask(index + 1, token, request, roles, error, decided))
          // Whatever answering the request throws is the request's failure, never an unhandled
          // rejection that would end the process.
          .catch((error: unknown) => request.log.error({ err: error }, 'authentication failed unexpectedly'))
        return
      }
      if (verdict !== notMine) {
        this.#decide(verdict, request, roles, decided)
        return
      }
    }
    decided(failure === undefined ? new InvalidTokenError() : failure instanceof Error ? failure : new Error(String(failure)))
  }

  #decide (verdict: AcceptedToken | ApiError, request: FastifyRequest, roles: readonly string[], decided: Decided): void {
    if (verdict instanceof ApiError) {
      decided(verdict)
      return
    }
    request.identity = verdict.identity
    this.#remember(request, verdict)
    decided(refusalOfRoles(verdict.identity, roles))
  }

  // A keep-alive client sends the same header with every request: accepted again without
  // hashing, asking the store or verifying a signature, until the verifier that accepted it said
  // it may have changed (a managed token's cache time, a JWT's expiry). The identity it was
  // accepted as, or undefined when it must be verified.
  #reused (request: FastifyRequest, authorization: string): Identity | undefined {
    const socket: Socket | null = request.raw.socket
    const cached = socket === null ? undefined : this.#acceptedOnConnection.get(socket)
    if (cached === undefined || !isSameHeader(authorization, cached.header)) return undefined
    const { reusableUntil, identity } = cached.accepted
    if (reusableUntil !== Number.POSITIVE_INFINITY && reusableUntil <= Date.now()) return undefined
    request.identity = identity
    return identity
  }

  // A header its verifier will not let be reused (TOKEN_CACHE_TTL=0) is not kept.
  #remember (request: FastifyRequest, accepted: AcceptedToken): void {
    const socket: Socket | null = request.raw.socket
    const header = request.headers.authorization
    if (socket === null || header === undefined || accepted.reusableUntil <= Date.now()) return
    this.#acceptedOnConnection.set(socket, { header: Buffer.from(header), accepted })
  }
}

// The token of an `Authorization: Bearer <token>` header (RFC 6750 section 2.1), or why there is
// none: no header or another scheme is missing credentials (401), a header with the Bearer
// scheme but no single token68 after it is malformed (400). Only this header is read: tokens in
// the query string or the body are ignored, as they would end up in logs and caches. The mock
// (src/mock/) refuses credentials with it too.
export function bearerTokenOf (authorization: string | undefined): string | ApiError {
  const [scheme = '', ...rest] = (authorization?.trim() ?? '').split(/\s+/)
  if (scheme.toLowerCase() !== 'bearer') return new MissingCredentialsError()
  const [token] = rest
  if (token === undefined || rest.length > 1 || !token68.test(token)) return new MalformedCredentialsError()
  return token
}

// A valid token that lacks a role is refused as RFC 6750's insufficient_scope, naming every role
// the requirement lists.
function refusalOfRoles (identity: Identity, roles: readonly string[]): InsufficientScopeError | undefined {
  return roles.length === 0 || holdsRoles(identity, roles) ? undefined : new InsufficientScopeError(roles)
}

// One connection may carry several clients' requests (a proxy pooling its connections), so the
// header a request sends is compared with the one cached for its connection in constant time,
// at the cached header's length whatever the sent one's: the time tells nothing of how much of
// another client's header matched, nor of its length. UTF-8 keeps distinct strings distinct but
// for lone surrogates, which an accepted header (ASCII and whitespace) never holds.
function isSameHeader (header: string, accepted: Buffer): boolean {
  const sent = Buffer.from(header)
  const sameLength = sent.length === accepted.length
  return timingSafeEqual(sameLength ? sent : accepted, accepted) && sameLength
}
