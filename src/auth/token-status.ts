import type { StoredApiToken } from '../store/api-token-store.js'

export type TokenStatus = 'active' | 'expired' | 'revoked'

// A token is expired from the instant of its expiry on; revoked says more, so it comes first.
export function tokenStatus (token: StoredApiToken, now: Date): TokenStatus {
  if (token.revokedAt !== null) return 'revoked'
  if (token.expiresAt !== null && token.expiresAt.getTime() <= now.getTime()) return 'expired'
  return 'active'
}
