import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'

export const testIssuer = 'https://id.example.test/'
export const testAudience = 'plant-store-api'

export interface SigningKey {
  readonly kid: string
  readonly alg: string
  readonly privateKey: CryptoKey
  readonly publicJwk: JWK
}

export async function signingKey (kid: string, alg = 'ES256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  return { kid, alg, privateKey, publicJwk: { ...await exportJWK(publicKey), kid, alg, use: 'sig' } }
}

// A JWKS file of the keys' public halves, as JWT_JWKS_FILE reads it.
export function writeJwksFile (folder: string, keys: readonly SigningKey[]): string {
  const file = join(folder, 'jwks.json')
  writeFileSync(file, JSON.stringify({ keys: keys.map((key) => key.publicJwk) }))
  return file
}

export interface JwtClaims {
  readonly sub?: string
  readonly iss?: string
  readonly aud?: string
  // Seconds from now; negative is in the past.
  readonly expiresIn?: number
  readonly notBeforeIn?: number
}

export async function signJwt (key: SigningKey, claims: JwtClaims = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  const jwt = new SignJWT({})
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .setIssuer(claims.iss ?? testIssuer)
    .setAudience(claims.aud ?? testAudience)
    .setSubject(claims.sub ?? 'alice@example.test')
    .setIssuedAt(now)
    .setExpirationTime(now + (claims.expiresIn ?? 300))
  if (claims.notBeforeIn !== undefined) jwt.setNotBefore(now + claims.notBeforeIn)
  return jwt.sign(key.privateKey)
}
