import type { Config } from '../config/config.js'
import { parseTokenList } from '../config/config.js'
import type { OpenApiDocument } from '../openapi/openapi-document.js'
import type { ApiTokenStore } from '../store/api-token-store.js'
import { createApiTokenVerifier } from './api-token-verifier.js'
import { BearerCredentials, type TokenVerifier } from './bearer-credentials.js'
import { createJwtVerifier, jwtTokenVerifier } from './jwt/jwt-verifier.js'
import { jwtSettingsOf } from './jwt-settings.js'
import { createManagedTokenVerifier } from './managed-token-verifier.js'

export type CredentialSettings = Pick<Config, 'API_TOKENS' | 'TOKEN_CACHE_TTL' | 'METRICS_TOKEN' | 'JWT_ISSUER' | 'JWT_AUDIENCE' |
'JWT_JWKS_URL' | 'JWT_JWKS_FILE' | 'JWT_JWKS_TIMEOUT' | 'JWT_CLOCK_TOLERANCE' | 'JWT_ALGORITHMS'>

export interface CredentialsLog {
  warn (details: object, message: string): void
}

export interface Credentials {
  // Each bearer scheme openapi.yaml declares (bearerAuth), by name.
  readonly schemes: Readonly<Record<string, BearerCredentials>>
  // The operator's tokens an operation may name in `x-operator-token`, by setting; undefined
  // while the setting is empty (the operation is then public).
  readonly operatorTokens: Readonly<Record<string, BearerCredentials | undefined>>
  // Fetches the identity provider's keys ahead of the first JWT, so that a wrong JWT_JWKS_URL is
  // told at start; never rejects.
  readonly warmUp: () => Promise<void>
}

// The ways a consumer's bearer token is accepted, cheapest first: the tokens of API_TOKENS (if
// any), the store's managed tokens (always), JWTs (when JWT_ISSUER is set). Every http bearer
// scheme of the spec accepts them.
export async function createCredentials (
  document: OpenApiDocument, settings: CredentialSettings, tokens: ApiTokenStore, log: CredentialsLog
): Promise<Credentials> {
  const verifiers: TokenVerifier[] = []
  const apiTokens = parseTokenList(settings.API_TOKENS)
  if (apiTokens.length > 0) verifiers.push(createApiTokenVerifier(apiTokens))
  verifiers.push(createManagedTokenVerifier(tokens, {
    cacheTtlMs: settings.TOKEN_CACHE_TTL * 1000,
    onRecordUseFailed: (error) => log.warn({ err: error }, "a managed token's last use could not be recorded"),
  }))
  let warmUp = async (): Promise<void> => {}
  const jwtSettings = jwtSettingsOf(settings)
  if (jwtSettings !== undefined) {
    const jwt = await createJwtVerifier(jwtSettings, {
      onKeysUnavailable: (error) => log.warn({ err: error }, "the identity provider's signing keys could not be fetched: JWT callers get 503"),
    })
    verifiers.push(jwtTokenVerifier(jwt))
    warmUp = () => jwt.warmUp()
  }
  const consumers = new BearerCredentials(verifiers)
  const schemes = Object.fromEntries(bearerSchemeNames(document).map((name) => [name, consumers]))
  const metricsToken = settings.METRICS_TOKEN === ''
    ? undefined
    : new BearerCredentials([createApiTokenVerifier([settings.METRICS_TOKEN], 'metrics-token')])
  return { schemes, operatorTokens: { METRICS_TOKEN: metricsToken }, warmUp }
}

interface SecurityScheme {
  readonly type?: string
  readonly scheme?: string
}

// The schemes of components.securitySchemes that are HTTP bearer authentication; a scheme of
// another kind has no credentials here, and an operation that requires it does not start.
function bearerSchemeNames (document: OpenApiDocument): string[] {
  const components = document.components as { securitySchemes?: Record<string, SecurityScheme> } | undefined
  return Object.entries(components?.securitySchemes ?? {})
    .filter(([, scheme]) => scheme.type === 'http' && scheme.scheme?.toLowerCase() === 'bearer')
    .map(([name]) => name)
}
