import { type ApiTokenStore, TokenNameTakenError } from '../store/api-token-store.js'
import { issueManagedToken, tokenStatus } from './managed-token.js'

const defaultTokenName = 'default'

export type DefaultTokenOutcome =
  | { readonly created: true, readonly token: string }
  | { readonly created: false, readonly activeTokens: number }

// A service started with no credentials configured (no API_TOKENS, no JWT_ISSUER) accepts the
// store's managed tokens only. On its first run, when the store has never held a token, one
// named `default` is created; its digest is stored, so it keeps working across restarts, and the
// token is handed back to be shown once. Later runs create nothing: tokens revoked on purpose are
// not replaced behind the operator's back.
export async function provisionDefaultToken (tokens: ApiTokenStore, now = new Date()): Promise<DefaultTokenOutcome> {
  let stored = await tokens.list()
  if (stored.length === 0) {
    try {
      const { token } = await issueManagedToken(tokens, { name: defaultTokenName, now })
      return { created: true, token }
    } catch (error) {
      // Another instance starting on the same database created it first.
      if (!(error instanceof TokenNameTakenError)) throw error
      stored = await tokens.list()
    }
  }
  const active = stored.filter((token) => tokenStatus(token, now) === 'active')
  return { created: false, activeTokens: active.length }
}
