import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { audience, createSigningKey, issuer, keySetOf, type SigningKey, signToken } from './signing-keys.js'

// The test identity provider (signing-keys.ts) as the app's tests use it: on the real clock, and
// with its keys in a JWKS file for JWT_JWKS_FILE.

export const testIssuer = issuer
export const testAudience = audience

export async function signingKey (kid: string): Promise<SigningKey> {
  return createSigningKey('ES256', kid)
}

export function writeJwksFile (folder: string, keys: readonly SigningKey[]): string {
  const file = join(folder, 'jwks.json')
  writeFileSync(file, JSON.stringify(keySetOf(...keys)))
  return file
}

export interface JwtClaims {
  readonly sub?: string
  readonly aud?: string
  // Seconds from now; negative is in the past.
  readonly expiresIn?: number
}

export async function signJwt (key: SigningKey, { sub = 'alice@example.test', aud = audience, expiresIn = 300 }: JwtClaims = {}): Promise<string> {
  const nowSeconds = Math.floor(Date.now() / 1000)
  return signToken(key, { nowSeconds, claims: { sub, aud, exp: nowSeconds + expiresIn } })
}
