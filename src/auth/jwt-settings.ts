import type { Config } from '../config.js'

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

// The problems of a JWT configuration that each setting alone cannot show.
export function jwtConfigProblems (config: JwtConfig): string[] {
  const issuer = config.JWT_ISSUER !== ''
  const audience = config.JWT_AUDIENCE !== ''
  const keySources = [config.JWT_JWKS_URL, config.JWT_JWKS_FILE].filter((source) => source !== '').length
  if (!issuer && !audience && keySources === 0) return []
  const problems: string[] = []
  if (!issuer || !audience) problems.push('JWT_ISSUER and JWT_AUDIENCE must both be set to accept JWTs (or neither, to accept none)')
  if (keySources !== 1) problems.push('exactly one of JWT_JWKS_URL and JWT_JWKS_FILE must be set to accept JWTs')
  if (config.JWT_JWKS_URL !== '' && !isTrustworthyKeyUrl(config.JWT_JWKS_URL)) {
    problems.push('JWT_JWKS_URL must be an https:// URL (http:// only on 127.0.0.0/8, localhost or [::1]), with no user name or password')
  }
  return problems
}

// The keys decide which JWTs are genuine: fetched over plain HTTP from another machine, anyone on
// the way could replace them. The host is read as fetch() will read it, so that
// http://127.0.0.1@attacker.example/ is not taken for the loopback address.
function isTrustworthyKeyUrl (text: string): boolean {
  if (!URL.canParse(text)) return false
  const url = new URL(text)
  if (url.username !== '' || url.password !== '') return false
  if (url.protocol === 'https:') return true
  return url.protocol === 'http:' && (url.hostname === 'localhost' || url.hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(url.hostname))
}
