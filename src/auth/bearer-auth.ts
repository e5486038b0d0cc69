import { hash, timingSafeEqual } from 'node:crypto'
import type { Socket } from 'node:net'
import type { FastifyReply, FastifyRequest } from 'fastify'
import {
  ApiError, InvalidTokenError, MalformedCredentialsError, MissingCredentialsError,
} from '../errors/api-errors.js'
import type { Credential } from './credential.js'
import { token68 } from './token68.js'

// A callback, as @fastify/auth accepts: an async handler would cost a promise per request.
export type SecurityHandler = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void

interface AcceptedToken {
  readonly digest: Buffer
  readonly credential: Credential
}

interface AcceptedHeader {
  readonly header: Buffer
  readonly credential: Credential
}

// The bearerAuth scheme of openapi.yaml. Only the Authorization header is read: tokens in the
// query string or the body are ignored, as they would end up in logs and caches. An accepted
// request gets the credential it authenticated as (request.credential), never the token.
export function createBearerAuth (acceptedTokens: readonly string[]): SecurityHandler {
  if (acceptedTokens.length === 0) throw new Error('bearer authentication needs at least one token')
  const accepted = acceptedTokens.map((token): AcceptedToken => {
    const digest = sha256(token)
    return { digest, credential: { id: credentialId(digest) } }
  })
  // The Authorization header last accepted on each connection, with its credential. A keep-alive
  // client sends the same one with every request; it is accepted again without hashing. The
  // accepted tokens are fixed for the life of the app, so the verdict cannot have changed since.
  const acceptedOnConnection = new WeakMap<Socket, AcceptedHeader>()

  return function bearerAuth (request, _reply, done) {
    const header = request.headers.authorization
    const socket: Socket | null = request.raw.socket
    const cached = socket === null ? undefined : acceptedOnConnection.get(socket)
    if (header !== undefined && cached !== undefined && isSameHeader(header, cached.header)) {
      request.credential = cached.credential
      done()
      return
    }
    const verdict = verdictOn(header, accepted)
    if (verdict instanceof ApiError) {
      done(verdict)
      return
    }
    request.credential = verdict
    if (header !== undefined && socket !== null) {
      acceptedOnConnection.set(socket, { header: Buffer.from(header), credential: verdict })
    }
    done()
  }
}

// The credential a header authenticates as, or why it does not.
function verdictOn (authorization: string | undefined, accepted: readonly AcceptedToken[]): Credential | ApiError {
  const [scheme = '', ...rest] = (authorization?.trim() ?? '').split(/\s+/)
  if (scheme.toLowerCase() !== 'bearer') return new MissingCredentialsError()
  const [token] = rest
  if (token === undefined || rest.length > 1 || !token68.test(token)) return new MalformedCredentialsError()
  return acceptedCredential(sha256(token), accepted) ?? new InvalidTokenError()
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

function sha256 (text: string): Buffer {
  return hash('sha256', text, 'buffer')
}

// Digests have one length whatever the token's, and every accepted digest is compared (a match
// only decides which credential is kept), so the time taken tells nothing of which token or how
// much of it matched.
function acceptedCredential (digest: Buffer, accepted: readonly AcceptedToken[]): Credential | undefined {
  let credential: Credential | undefined
  for (const candidate of accepted) {
    if (timingSafeEqual(digest, candidate.digest)) credential = candidate.credential
  }
  return credential
}

// The first 64 bits of the token's digest, in hex: enough to tell the configured tokens apart,
// the same on every instance and restart, and never the token. It is not logged nor sent.
function credentialId (digest: Buffer): string {
  return digest.toString('hex', 0, 8)
}
