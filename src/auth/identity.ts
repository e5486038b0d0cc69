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

// The roles of `required` the identity does not hold.
export function missingRoles ({ roles }: Identity, required: readonly string[]): string[] {
  return roles === 'every role' ? [] : required.filter((role) => !roles.has(role))
}

declare module 'fastify' {
  interface FastifyRequest {
    // Decorated (null) by src/plugins/openapi-routes.ts; set by the verifier that accepts the
    // request's credentials, and null on public operations.
    identity: Identity | null
  }
}
