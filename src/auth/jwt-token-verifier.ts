import { identityOf } from './identity.js'
import { type JwtVerifier, looksLikeJwt } from './jwt/jwt-verifier.js'
import { notMine, type TokenVerifier } from './token-verifier.js'

// A verified JWT is accepted again on its connection without verifying its signature until it
// expires, and for no longer than this: a key the identity provider withdrew stops being trusted
// on long-lived connections too.
const reverifyAfterMs = 60_000

// JWTs from the identity provider (JWT_ISSUER): the identity is the token's `sub`.
export function createJwtTokenVerifier (jwt: JwtVerifier): TokenVerifier {
  return function verifyJwt (token) {
    if (!looksLikeJwt(token)) return notMine
    return jwt.verify(token).then(({ subject, roles, expiresAtMs }) => ({
      identity: identityOf('jwt', subject, new Set(roles)),
      reusableUntil: Math.min(expiresAtMs, Date.now() + reverifyAfterMs),
    }))
  }
}
