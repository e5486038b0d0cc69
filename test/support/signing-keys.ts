import {
  base64url, type CryptoKey, exportJWK, generateKeyPair, type JSONWebKeySet, type JWK, type JWTPayload, SignJWT,
} from 'jose'
import type { JwtSettings } from '../../src/auth/jwt-settings.js'

// An identity provider of the tests' own: key pairs made here, the JWKS that publishes them, and
// the JWTs they sign.

export const issuer = 'https://id.example.test/'
export const audience = 'plant-store'

export interface SigningKey {
  readonly kid: string
  readonly alg: string
  readonly privateKey: CryptoKey
  readonly publicKey: CryptoKey
  readonly publicJwk: JWK
}

export async function createSigningKey (alg: 'RS256' | 'ES256' | 'EdDSA', kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  return { kid, alg, privateKey, publicKey, publicJwk: { ...await exportJWK(publicKey), kid, alg, use: 'sig' } }
}

export function keySetOf (...keys: SigningKey[]): JSONWebKeySet {
  return { keys: keys.map((key) => key.publicJwk) }
}

export interface TokenOptions {
  // Seconds since the epoch that the token's times are counted from.
  readonly nowSeconds: number
  // Claims to set, or with undefined to leave out, over the defaults: iss, aud, sub, iat and
  // exp five minutes on.
  readonly claims?: Record<string, unknown>
  // false signs without a kid.
  readonly withKid?: boolean
}

export async function signToken (key: SigningKey, { nowSeconds, claims = {}, withKid = true }: TokenOptions): Promise<string> {
  const payload: Record<string, unknown> = { iss: issuer, aud: audience, sub: 'alice', iat: nowSeconds, exp: nowSeconds + 300, ...claims }
  for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name]
  return new SignJWT(payload as JWTPayload)
    .setProtectedHeader({ alg: key.alg, typ: 'JWT', ...(withKid ? { kid: key.kid } : {}) })
    .sign(key.privateKey)
}

// A compact JWS of any header and payload, signature included, as an attacker would write one.
export function handMadeToken (header: unknown, payload: unknown, signature = ''): string {
  return `${encodeJson(header)}.${encodeJson(payload)}.${signature}`
}

export function encodeJson (value: unknown): string {
  return base64url.encode(JSON.stringify(value))
}

export function settingsWith (keySource: { jwksUrl: string } | { jwksFile: string }, overrides: Partial<JwtSettings> = {}): JwtSettings {
  return {
    issuer,
    audience,
    ...keySource,
    jwksTimeoutMs: 1000,
    clockToleranceSeconds: 30,
    algorithms: ['RS256', 'ES256', 'EdDSA'],
    ...overrides,
  }
}

// A clock the test moves; it starts on a whole second, as JWT times are whole seconds.
export function testClock (startMs = Math.floor(Date.now() / 1000) * 1000) {
  const clock = {
    ms: startMs,
    now: () => clock.ms,
    seconds: () => Math.floor(clock.ms / 1000),
  }
  return clock
}
