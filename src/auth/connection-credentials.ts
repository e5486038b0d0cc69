import { timingSafeEqual } from 'node:crypto'
import type { Socket } from 'node:net'
import type { FastifyRequest } from 'fastify'
import type { AcceptedToken } from './token-verifier.js'

interface AcceptedHeader {
  readonly header: Buffer
  readonly accepted: AcceptedToken
}

// The Authorization header last accepted on each connection. A keep-alive client sends the same
// one with every request; it is accepted again without hashing, asking the store or verifying a
// signature, until the verifier that accepted it said it may have changed (a managed token's
// cache time, a JWT's expiry).
export class ConnectionCredentials {
  private readonly acceptedOnConnection = new WeakMap<Socket, AcceptedHeader>()

  // Sets request.identity and says true when the request's header was accepted on its connection
  // and may still be.
  reuse (request: FastifyRequest): boolean {
    const header = request.headers.authorization
    const socket: Socket | null = request.raw.socket
    const cached = socket === null ? undefined : this.acceptedOnConnection.get(socket)
    if (header === undefined || cached === undefined || !isSameHeader(header, cached.header)) return false
    const { reusableUntil, identity } = cached.accepted
    if (reusableUntil !== Number.POSITIVE_INFINITY && reusableUntil <= Date.now()) return false
    request.identity = identity
    return true
  }

  // A header its verifier will not let be reused (TOKEN_CACHE_TTL=0) is not kept.
  remember (request: FastifyRequest, header: string, accepted: AcceptedToken): void {
    const socket: Socket | null = request.raw.socket
    if (socket === null || accepted.reusableUntil <= Date.now()) return
    this.acceptedOnConnection.set(socket, { header: Buffer.from(header), accepted })
  }
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
