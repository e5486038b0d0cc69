import { hash, timingSafeEqual } from 'node:crypto'
import type { Socket } from 'node:net'
import type { FastifyReply, FastifyRequest } from 'fastify'
import {
  type ApiError, InvalidTokenError, MalformedCredentialsError, MissingCredentialsError,
} from '../errors/api-errors.js'
import { token68 } from './token68.js'

// A callback, as @fastify/auth accepts: an async handler would cost a promise per request.
export type SecurityHandler = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void

// The bearerAuth scheme of openapi.yaml. Only the Authorization header is read: tokens in the
// query string or the body are ignored, as they would end up in logs and caches.
export function createBearerAuth (acceptedTokens: readonly string[]): SecurityHandler {
  if (acceptedTokens.length === 0) throw new Error('bearer authentication needs at least one token')
  const acceptedDigests = acceptedTokens.map(sha256)
  // The Authorization header last accepted on each connection. A keep-alive client sends the
  // same one with every request; it is accepted again without hashing. The accepted tokens are
  // fixed for the life of the app, so the verdict cannot have changed since.
  const acceptedOnConnection = new WeakMap<Socket, Buffer>()

  return function bearerAuth (request, _reply, done) {
    const header = request.headers.authorization
    const socket: Socket | null = request.raw.socket
    if (header !== undefined && socket !== null && isSameHeader(header, acceptedOnConnection.get(socket))) {
      done()
      return
    }
    const refusal = refusalOf(header, acceptedDigests)
    if (refusal === undefined && header !== undefined && socket !== null) {
      acceptedOnConnection.set(socket, Buffer.from(header))
    }
    done(refusal)
  }
}

function refusalOf (authorization: string | undefined, acceptedDigests: readonly Buffer[]): ApiError | undefined {
  const [scheme = '', ...rest] = (authorization?.trim() ?? '').split(/\s+/)
  if (scheme.toLowerCase() !== 'bearer') return new MissingCredentialsError()
  const [token] = rest
  if (token === undefined || rest.length > 1 || !token68.test(token)) return new MalformedCredentialsError()
  return isAccepted(sha256(token), acceptedDigests) ? undefined : new InvalidTokenError()
}

// One connection may carry several clients' requests (a proxy pooling its connections), so the
// header a request sends is compared with the one cached for its connection in constant time,
// at the cached header's length whatever the sent one's: the time tells nothing of how much of
// another client's header matched, nor of its length. UTF-8 keeps distinct strings distinct but
// for lone surrogates, which an accepted header (ASCII and whitespace) never holds.
function isSameHeader (header: string, accepted: Buffer | undefined): boolean {
  if (accepted === undefined) return false
  const sent = Buffer.from(header)
  const sameLength = sent.length === accepted.length
  return timingSafeEqual(sameLength ? sent : accepted, accepted) && sameLength
}

function sha256 (text: string): Buffer {
  return hash('sha256', text, 'buffer')
}

// Digests have one length whatever the token's, and every accepted digest is compared, so the
// time taken tells nothing of which token or how much of it matched.
function isAccepted (digest: Buffer, acceptedDigests: readonly Buffer[]): boolean {
  let accepted = false
  for (const candidate of acceptedDigests) {
    accepted = timingSafeEqual(digest, candidate) || accepted
  }
  return accepted
}
