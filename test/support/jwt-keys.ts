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
  // The roles it grants, as RFC 9068's space-separated `scope` (every role of openapi.yaml by
  // default), or as an `scp` array; undefined leaves the claim out.
  readonly scope?: string | undefined
  readonly scp?: readonly string[] | undefined
}

export const everyRoleScope = 'plants:read plants:write'

export async function signJwt (key: SigningKey, claims: JwtClaims = {}): Promise<string> {
  const { sub = 'alice@example.test', aud = audience, expiresIn = 300 } = claims
  const scope = Object.hasOwn(claims, 'scope') || Object.hasOwn(claims, 'scp') ? claims.scope : everyRoleScope
  const nowSeconds = Math.floor(Date.now() / 1000)
  return signToken(key, { nowSeconds, claims: { sub, aud, exp: nowSeconds + expiresIn, scope, scp: claims.scp } })
}
