// Who a request authenticated as: what the per-credential rate limit counts a protected
// operation's requests against. The security handler that accepts a request sets it; it stays
// null on public operations. It names the credential without holding it: today an id derived
// from the token's SHA-256 digest; a token's name or a JWT's `sub` would take its place here.
export interface Credential {
  readonly id: string
}

declare module 'fastify' {
  interface FastifyRequest {
    // Decorated (null) by src/plugins/openapi-routes.ts.
    credential: Credential | null
  }
}
