// Managed API tokens as every backend keeps them: the SHA-256 digest of each token, never the
// token, under a name that is unique among the tokens not revoked (a revoked token's name may be
// given to a new one). Times are kept to the millisecond.
export interface StoredApiToken {
  readonly name: string
  readonly createdAt: Date
  // null: the token does not expire.
  readonly expiresAt: Date | null
  // Updated at most once a minute per token and instance (see recordUse): to within a minute.
  readonly lastUsedAt: Date | null
  // null: not revoked.
  readonly revokedAt: Date | null
  // The roles it holds, of those openapi.yaml names; null: every role (a token issued before
  // roles, or without naming any).
  readonly roles: readonly string[] | null
}

export interface NewApiToken {
  readonly name: string
  readonly digest: Buffer
  readonly createdAt: Date
  readonly expiresAt: Date | null
  // Absent or null: every role.
  readonly roles?: readonly string[] | null
}

// A token not revoked already has the name.
export class TokenNameTakenError extends Error {
  constructor (readonly tokenName: string) {
    super(`a token named ${JSON.stringify(tokenName)} exists and is not revoked`)
    this.name = 'TokenNameTakenError'
  }
}

// Every backend implements this (PlantStore.apiTokens) and passes test/store/api-token-store-contract.ts.
// Every method rejects with StoreUnavailableError when the backend cannot be reached for now.
export interface ApiTokenStore {
  // Rejects with TokenNameTakenError when a token not revoked has the name.
  create (token: NewApiToken): Promise<StoredApiToken>
  // The token with this digest, revoked or expired as it may be; undefined when there is none.
  findByDigest (digest: Buffer): Promise<StoredApiToken | undefined>
  // Sets the token's last use to `at` unless a later one is stored.
  recordUse (digest: Buffer, at: Date): Promise<void>
  // Every token, revoked and expired included, oldest first.
  list (): Promise<StoredApiToken[]>
  // Revokes the token named `name` that is not revoked yet; false when there is none.
  revoke (name: string, at: Date): Promise<boolean>
}
