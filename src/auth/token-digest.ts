import { hash } from 'node:crypto'

// What is kept of a token, in memory and in the store: its SHA-256 digest, never the token.
export function tokenDigest (token: string): Buffer {
  return hash('sha256', token, 'buffer')
}
