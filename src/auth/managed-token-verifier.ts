import { InvalidTokenError } from '../errors/credential-errors.js'
import { unreachable } from '../errors/unreachable.js'
import type { ApiTokenStore, StoredApiToken } from '../store/api-token-store.js'
import { notMine, type TokenVerdict, type TokenVerifier } from './bearer-credentials.js'
import { type Identity, identityOf } from './identity.js'
import { classifyManagedToken, tokenDigest, tokenStatus } from './managed-token.js'

export interface ManagedTokenVerifierOptions {
  // How long what was read of a token is trusted (TOKEN_CACHE_TTL): a revocation or a new expiry
  // takes effect on every instance within this time. An expiry already read is exact.
  readonly cacheTtlMs: number
  readonly now?: () => number
  // A failed update of a token's last use: told, and tried again at its next lookup.
  readonly onRecordUseFailed?: (error: unknown) => void
}

// A token found in the store. One that was not found is not cached: a token created just after a
// failed try must work at once.
interface CachedToken {
  readonly stored: StoredApiToken
  readonly identity: Identity
  readonly readAt: number
}

// Last use is written when it is older than this: at most once a minute per token and instance,
// and only when the token is looked up, so never on the request path's every request.
const lastUseResolutionMs = 60_000
// The tokens a flood of distinct well-formed tokens cannot make the cache hold beyond.
const maxCachedTokens = 10_000

// The store's managed tokens (`ps_…`). A mistyped one is refused without asking the store; a
// well-formed one is looked up by its digest, and what was read is trusted for cacheTtlMs.
// Concurrent requests with one token share one lookup.
export function createManagedTokenVerifier (tokens: ApiTokenStore, options: ManagedTokenVerifierOptions): TokenVerifier {
  const { cacheTtlMs, now = Date.now, onRecordUseFailed = () => undefined } = options
  const cache = new Map<string, CachedToken>()
  const lookups = new Map<string, Promise<CachedToken | undefined>>()

  const lookUp = async (key: string, digest: Buffer): Promise<CachedToken | undefined> => {
    const stored = await tokens.findByDigest(digest)
    const readAt = now()
    cache.delete(key)
    if (stored === undefined) return undefined
    if (cache.size >= maxCachedTokens) cache.delete(cache.keys().next().value as string)
    const cached = { stored, identity: identityOf('token', stored.name, stored.roles === null ? 'every role' : new Set(stored.roles)), readAt }
    cache.set(key, cached)
    if (tokenStatus(stored, new Date(readAt)) === 'active' && (stored.lastUsedAt === null || readAt - stored.lastUsedAt.getTime() >= lastUseResolutionMs)) {
      // After the waiting requests are answered: on SQLite the write (and its fsync) blocks.
      setImmediate(() => { tokens.recordUse(digest, new Date(readAt)).catch(onRecordUseFailed) })
    }
    return cached
  }

  const verdictOn = (cached: CachedToken | undefined, at: number): TokenVerdict => {
    if (cached === undefined) return new InvalidTokenError()
    const { stored, identity, readAt } = cached
    const status = tokenStatus(stored, new Date(at))
    switch (status) {
      case 'revoked': return new InvalidTokenError('the token has been revoked')
      case 'expired': return new InvalidTokenError('the token has expired')
      case 'active': return { identity, reusableUntil: Math.min(readAt + cacheTtlMs, stored.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY) }
      default: return unreachable(status)
    }
  }

  const verifyWellFormed = (token: string): TokenVerdict | Promise<TokenVerdict> => {
    const digest = tokenDigest(token)
    const key = digest.toString('base64')
    const at = now()
    const cached = cache.get(key)
    if (cached !== undefined && at < cached.readAt + cacheTtlMs) return verdictOn(cached, at)
    let lookup = lookups.get(key)
    if (lookup === undefined) {
      lookup = lookUp(key, digest).finally(() => lookups.delete(key))
      lookups.set(key, lookup)
    }
    return lookup.then((found) => verdictOn(found, now()))
  }

  return function verifyManagedToken (token) {
    const kind = classifyManagedToken(token)
    switch (kind) {
      case 'other': return notMine
      case 'mistyped': return new InvalidTokenError('the token is mistyped or truncated: its checksum does not match')
      case 'managed': return verifyWellFormed(token)
      default: return unreachable(kind)
    }
  }
}
