import { randomInt } from 'node:crypto'
import { crc32 } from 'node:zlib'

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
