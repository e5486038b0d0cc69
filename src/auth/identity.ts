// Who a request authenticated as: logged in its access line and what the per-credential rate
// limit counts its requests against. It names the credential without holding it: a managed
// token's name, a JWT's `sub`, or for a token of API_TOKENS (which has no name) its place in that
// list, and for METRICS_TOKEN `metrics-token:1`. The token itself is never kept here, so never logged.
export type IdentityKind = 'api-token' | 'metrics-token' | 'token' | 'jwt'

// The roles a credential holds, of those openapi.yaml's security requirements name, or every role.
export type HeldRoles = ReadonlySet<string> | 'every role'

export interface Identity {
  readonly kind: IdentityKind
  readonly name: string
  // `kind:name`, built once: a managed token named "alice" and a JWT whose sub is "alice" are
  // two identities, counted apart.
  readonly key: string
  readonly roles: HeldRoles
}

export function identityOf (kind: IdentityKind, name: string, roles: HeldRoles = 'every role'): Identity {
  return { kind, name, key: `${kind}:${name}`, roles }
}

// Whether the identity holds every role of `required`. A loop, not `every` with a closure: it
// runs for every request to an operation that names roles, the accepted-header path included.
export function holdsRoles ({ roles }: Identity, required: readonly string[]): boolean {
  if (roles === 'every role') return true
  for (const role of required) if (!roles.has(role)) return false
  return true
}

declare module 'fastify' {
  interface FastifyRequest {
    // Decorated (null) by src/plugins/openapi-routes.ts; set by the verifier that accepts the
    // request's credentials, and null on public operations.
    identity: Identity | null
  }
}
