import type { ApiError } from '../errors/api-errors.js'
import type { Identity } from './identity.js'

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
