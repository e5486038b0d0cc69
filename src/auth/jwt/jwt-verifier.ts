import { jwtVerify, type JWTPayload } from 'jose'
import { asymmetricJwtAlgorithms } from '../../config/config.js'
import { IdentityProviderUnavailableError, InvalidTokenError } from '../../errors/credential-errors.js'
import { notMine, type TokenVerifier } from '../bearer-credentials.js'
import { identityOf } from '../identity.js'
import type { JwtSettings } from '../jwt-settings.js'
import { keySetOf, SigningKeysUnavailableError } from './key-set.js'
import { refusalDescriptionOf } from './refusal-description.js'

// The JWS compact form: header, payload and signature in base64url, joined by dots. The
// signature may be empty, so that an unsigned token (alg none) is still taken for a JWT and
// refused for its algorithm, rather than looked up as an opaque token.
const jwsCompactForm = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/

export function looksLikeJwt (token: string): boolean {
  return jwsCompactForm.test(token)
}

export interface VerifiedJwt {
  readonly subject: string
  // The roles it grants: its `scope` claim (space-separated, RFC 9068), or else its `scp` (an
  // array, or space-separated); none when it has neither. Whatever is not a string grants nothing.
  readonly roles: readonly string[]
  // exp, in milliseconds since the epoch.
  readonly expiresAtMs: number
}

export interface JwtVerifier {
  // Rejects with an InvalidTokenError for a token that is not accepted, and with an
  // IdentityProviderUnavailableError when the keys to check it could not be fetched.
  verify (token: string): Promise<VerifiedJwt>
  // Fetches JWT_JWKS_URL's keys ahead of the first token; never rejects (a failure goes to
  // onKeysUnavailable). Nothing to do for JWT_JWKS_FILE.
  warmUp (): Promise<void>
}

export interface JwtVerifierOptions {
  // Milliseconds since the epoch, for the token's times; tests pass a clock of their own. (The
  // keys fetched from JWT_JWKS_URL age on jose's clock, Date.now.)
  readonly now?: () => number
  // Told of each failed fetch of JWT_JWKS_URL, with why; the callers it fails get a 503.
  readonly onKeysUnavailable?: (error: unknown) => void
}

const requiredClaims = ['sub', 'exp']

// Checks a JWT's signature against the identity provider's keys (JWT_JWKS_FILE, read now, or
// JWT_JWKS_URL, fetched when first needed), then its iss, aud, exp and nbf.
export async function createJwtVerifier (settings: JwtSettings, options: JwtVerifierOptions = {}): Promise<JwtVerifier> {
  requireAsymmetricAlgorithms(settings.algorithms)
  const now = options.now ?? Date.now
  const { getKey, warmUp } = await keySetOf(settings, options.onKeysUnavailable ?? (() => {}))
  const algorithms = [...settings.algorithms]

  return {
    async verify (token) {
      let payload: JWTPayload
      try {
        ({ payload } = await jwtVerify(token, getKey, {
          issuer: settings.issuer,
          audience: settings.audience,
          algorithms,
          clockTolerance: settings.clockToleranceSeconds,
          currentDate: new Date(now()),
          requiredClaims,
        }))
      } catch (error) {
        if (error instanceof SigningKeysUnavailableError) throw new IdentityProviderUnavailableError(error.retryAfterSeconds)
        throw new InvalidTokenError(refusalDescriptionOf(error))
      }
      // jose has checked that both are present, and that exp is a number.
      if (typeof payload.sub !== 'string' || payload.sub === '') throw new InvalidTokenError('the token names no subject')
      if (payload.exp === undefined) throw new InvalidTokenError('the token has no expiry')
      return { subject: payload.sub, roles: rolesOf(payload), expiresAtMs: payload.exp * 1000 }
    },
    warmUp,
  }
}

// A verified JWT is accepted again on its connection without verifying its signature until it
// expires, and for no longer than this: a key the identity provider withdrew stops being trusted
// on long-lived connections too.
const reverifyAfterMs = 60_000

// JWTs as one of a bearer scheme's verifiers: the identity is the token's `sub`.
export function jwtTokenVerifier (jwt: JwtVerifier): TokenVerifier {
  return function verifyJwt (token) {
    if (!looksLikeJwt(token)) return notMine
    return jwt.verify(token).then(({ subject, roles, expiresAtMs }) => ({
      identity: identityOf('jwt', subject, new Set(roles)),
      reusableUntil: Math.min(expiresAtMs, Date.now() + reverifyAfterMs),
    }))
  }
}

function rolesOf ({ scope, scp }: JWTPayload): string[] {
  const granted = typeof scope === 'string' ? scope : scp
  const names: unknown[] = typeof granted === 'string' ? granted.split(' ') : Array.isArray(granted) ? granted : []
  return names.filter((name): name is string => typeof name === 'string' && name !== '')
}

// loadConfig refuses these already; this holds for settings built any other way. With an HMAC
// algorithm allowed, a token signed with a public key as its secret would verify.
function requireAsymmetricAlgorithms (algorithms: readonly string[]): void {
  const accepted: readonly string[] = asymmetricJwtAlgorithms
  const refused = algorithms.filter((algorithm) => !accepted.includes(algorithm))
  if (refused.length > 0) {
    throw new Error(`JWT_ALGORITHMS must name only asymmetric algorithms (${accepted.join(', ')}), not ${refused.join(', ')}`)
  }
  if (algorithms.length === 0) throw new Error('JWT_ALGORITHMS must name at least one algorithm')
}
