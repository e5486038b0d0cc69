import type { ApiTokenStore, StoredApiToken } from '../store/api-token-store.js'
import { mintManagedToken } from './managed-token-format.js'
import { tokenDigest } from './token-digest.js'

export interface IssuedToken {
  // The token itself: shown once to whoever asked for it, and kept nowhere.
  readonly token: string
  readonly stored: StoredApiToken
}

// Mints a managed token and stores its digest under `name`, with its roles (null: every role). Rejects with TokenNameTakenError when
// a token not revoked has the name.
export async function issueManagedToken (
  tokens: ApiTokenStore,
  { name, expiresAt = null, roles = null, now = new Date() }: { name: string, expiresAt?: Date | null, roles?: readonly string[] | null, now?: Date }
): Promise<IssuedToken> {
  const token = mintManagedToken()
  const stored = await tokens.create({ name, digest: tokenDigest(token), createdAt: now, expiresAt, roles })
  return { token, stored }
}
