import type { Config } from '../config/config.js'

// What the JWT verifier needs, read from the JWT_* settings. loadConfig has already refused a
// half-made JWT configuration, so there is either all of this or none.
export interface JwtSettings {
  readonly issuer: string
  readonly audience: string
  // Exactly one of the two.
  readonly jwksUrl?: string
  readonly jwksFile?: string
  readonly jwksTimeoutMs: number
  readonly clockToleranceSeconds: number
  readonly algorithms: readonly string[]
}

export type JwtConfig = Pick<Config, 'JWT_ISSUER' | 'JWT_AUDIENCE' | 'JWT_JWKS_URL' | 'JWT_JWKS_FILE' |
'JWT_JWKS_TIMEOUT' | 'JWT_CLOCK_TOLERANCE' | 'JWT_ALGORITHMS'>

// undefined when JWTs are not configured (JWT_ISSUER is empty).
export function jwtSettingsOf (config: JwtConfig): JwtSettings | undefined {
  if (config.JWT_ISSUER === '') return undefined
  return {
    issuer: config.JWT_ISSUER,
    audience: config.JWT_AUDIENCE,
    ...(config.JWT_JWKS_URL === '' ? {} : { jwksUrl: config.JWT_JWKS_URL }),
    ...(config.JWT_JWKS_FILE === '' ? {} : { jwksFile: config.JWT_JWKS_FILE }),
    jwksTimeoutMs: config.JWT_JWKS_TIMEOUT,
    clockToleranceSeconds: config.JWT_CLOCK_TOLERANCE,
    algorithms: config.JWT_ALGORITHMS.split(',').map((algorithm) => algorithm.trim()),
  }
}
