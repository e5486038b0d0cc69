import { timingSafeEqual } from 'node:crypto'
import { type AcceptedToken, notMine, type TokenVerifier } from './bearer-credentials.js'
import { identityOf } from './identity.js'
import { tokenDigest } from './managed-token.js'

interface ConfiguredToken {
  readonly digest: Buffer
  readonly accepted: AcceptedToken
}

// The tokens of API_TOKENS, fixed for the life of the app. Each one's identity is its place in the
// list (`api-token:1` for the first): the same on every instance configured alike, and nothing
// derived from the token, which any hash of it in a log would let an offline guess confirm.
export function createApiTokenVerifier (tokens: readonly string[], kind: 'api-token' | 'metrics-token' = 'api-token'): TokenVerifier {
  const configured = tokens.map((token, index): ConfiguredToken => {
    const digest = tokenDigest(token)
    const identity = identityOf(kind, String(index + 1))
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
