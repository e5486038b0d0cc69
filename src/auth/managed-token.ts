import { hash, randomInt } from 'node:crypto'
import { crc32 } from 'node:zlib'
import type { ApiTokenStore, StoredApiToken } from '../store/api-token-store.js'

// A managed token is `ps_`, 32 random base62 characters (190 bits) and 6 base62 characters of
// the CRC-32 of what precedes them: 41 characters, all of RFC 6750's token68. The prefix lets
// secret scanners find a leaked token (`ps_[0-9A-Za-z]{38}`); the checksum lets the service
// refuse a mistyped or truncated one without asking the store.
export const managedTokenPrefix = 'ps_'
export const managedTokenPattern = /^ps_[0-9A-Za-z]{38}$/

const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const randomLength = 32
const checksumLength = 6

export function mintManagedToken (): string {
  let random = ''
  for (let i = 0; i < randomLength; i++) random += base62[randomInt(base62.length)]
  const body = managedTokenPrefix + random
  return body + checksumOf(body)
}

// 'other' for a token without the prefix (one of API_TOKENS, a JWT); 'mistyped' for one with the
// prefix whose length or checksum is wrong.
export function classifyManagedToken (token: string): 'managed' | 'mistyped' | 'other' {
  if (!token.startsWith(managedTokenPrefix)) return 'other'
  if (!managedTokenPattern.test(token)) return 'mistyped'
  const body = token.slice(0, -checksumLength)
  return token.slice(-checksumLength) === checksumOf(body) ? 'managed' : 'mistyped'
}

function checksumOf (body: string): string {
  let value = crc32(body)
  let digits = ''
  for (let i = 0; i < checksumLength; i++) {
    digits = base62[value % base62.length] + digits
    value = Math.floor(value / base62.length)
  }
  return digits
}

// What is kept of a token, in the store and in memory (API_TOKENS too): its SHA-256 digest,
// never the token.
export function tokenDigest (token: string): Buffer {
  return hash('sha256', token, 'buffer')
}

export type TokenStatus = 'active' | 'expired' | 'revoked'

// A token is expired from the instant of its expiry on; revoked says more, so it comes first.
export function tokenStatus (token: StoredApiToken, now: Date): TokenStatus {
  if (token.revokedAt !== null) return 'revoked'
  if (token.expiresAt !== null && token.expiresAt.getTime() <= now.getTime()) return 'expired'
  return 'active'
}

export interface IssuedToken {
  // The token itself: shown once to whoever asked for it, and kept nowhere.
  readonly token: string
  readonly stored: StoredApiToken
}

// Mints a managed token and stores its digest under `name`, with its roles (null: every role).
// Rejects with TokenNameTakenError when a token not revoked has the name.
export async function issueManagedToken (
  tokens: ApiTokenStore,
  { name, expiresAt = null, roles = null, now = new Date() }: { name: string, expiresAt?: Date | null, roles?: readonly string[] | null, now?: Date }
): Promise<IssuedToken> {
  const token = mintManagedToken()
  const stored = await tokens.create({ name, digest: tokenDigest(token), createdAt: now, expiresAt, roles })
  return { token, stored }
}
