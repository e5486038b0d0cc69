// Who a request authenticated as: logged in its access line and what the per-credential rate
// limit counts its requests against. It names the credential without holding it: a managed
// token's name, a JWT's `sub`, or for a token of API_TOKENS (which has no name) its place in that
// list, and for METRICS_TOKEN `metrics-token:1`. The token itself is never kept here, so never logged.
export type IdentityKind = 'api-token' | 'metrics-token' | 'token' | 'jwt'

export interface Identity {
  readonly kind: IdentityKind
  readonly name: string
  // `kind:name`, built once: a managed token named "alice" and a JWT whose sub is "alice" are
  // two identities, counted apart.
  readonly key: string
}

export function identityOf (kind: IdentityKind, name: string): Identity {
  return { kind, name, key: `${kind}:${name}` }
}

declare module 'fastify' {
  interface FastifyRequest {
    // Decorated (null) by src/plugins/openapi-routes.ts; set by the verifier that accepts the
    // request's credentials, and null on public operations.
    identity: Identity | null
  }
}
