import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { InvalidTokenError, MalformedCredentialsError, MissingCredentialsError } from '../errors/api-errors.js'
import { token68 } from './token68.js'

export type SecurityHandler = (request: FastifyRequest) => Promise<void>

// The bearerAuth scheme of openapi.yaml. Only the Authorization header is read: tokens in the
// query string or the body are ignored, as they would end up in logs and caches.
export function createBearerAuth (acceptedTokens: readonly string[]): SecurityHandler {
  if (acceptedTokens.length === 0) throw new Error('bearer authentication needs at least one token')
  const acceptedDigests = acceptedTokens.map(sha256)

  return async function bearerAuth (request) {
    const header = request.headers.authorization?.trim() ?? ''
    const [scheme = '', ...rest] = header.split(/\s+/)
    if (scheme.toLowerCase() !== 'bearer') throw new MissingCredentialsError()
    const [token] = rest
    if (token === undefined || rest.length > 1 || !token68.test(token)) throw new MalformedCredentialsError()
    if (!isAccepted(sha256(token), acceptedDigests)) throw new InvalidTokenError()
  }
}

function sha256 (text: string): Buffer {
  return createHash('sha256').update(text).digest()
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
