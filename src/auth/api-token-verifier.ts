import { timingSafeEqual } from 'node:crypto'
import { identityOf } from './identity.js'
import { tokenDigest } from './token-digest.js'
import { type AcceptedToken, notMine, type TokenVerifier } from './token-verifier.js'

interface ConfiguredToken {
  readonly digest: Buffer
  readonly accepted: AcceptedToken
}

// The tokens of API_TOKENS, fixed for the life of the app. Each one's identity is 64 bits of its
// digest in hex (`api-token:3f2a…`): the same on every instance and restart, never the token.
export function createApiTokenVerifier (tokens: readonly string[]): TokenVerifier {
  const configured = tokens.map((token): ConfiguredToken => {
    const digest = tokenDigest(token)
    const identity = identityOf('api-token', digest.toString('hex', 0, 8))
    return { digest, accepted: { identity, reusableUntil: Number.POSITIVE_INFINITY } }
  })
  return function verifyApiToken (token) {
    return acceptedToken(tokenDigest(token), configured) ?? notMine
  }
}

// Digests have one length whatever the token's, and every configured digest is compared (a match
// only decides which one is kept), so the time taken tells nothing of which token or how much of
// it matched.
function acceptedToken (digest: Buffer, configured: readonly ConfiguredToken[]): AcceptedToken | undefined {
  let accepted: AcceptedToken | undefined
  for (const candidate of configured) {
    if (timingSafeEqual(digest, candidate.digest)) accepted = candidate.accepted
  }
  return accepted
}
