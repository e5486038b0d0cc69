import type { Static } from '@sinclair/typebox'
import type { ConfigSchema } from './settings.js'

type JwtConfig = Pick<Static<typeof ConfigSchema>, 'JWT_ISSUER' | 'JWT_AUDIENCE' | 'JWT_JWKS_URL' | 'JWT_JWKS_FILE'>

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
