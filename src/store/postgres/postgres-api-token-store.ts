import pg from 'pg'
import type { ApiTokenStore, NewApiToken, StoredApiToken } from '../api-token-store.js'
import { TokenNameTakenError } from '../api-token-store.js'

// Runs a query on the store's pool once its tables are migrated, or refuses it with a
// StoreUnavailableError when the store cannot run it now; a transient failure becomes a
// StoreUnavailableError (PostgresPlantStore.runQuery).
export type RunPostgresQuery = <Row extends pg.QueryResultRow>(query: pg.QueryConfig) => Promise<pg.QueryResult<Row>>

interface TokenRow {
  name: string
  created_at: Date
  expires_at: Date | null
  last_used_at: Date | null
  revoked_at: Date | null
  roles: string[] | null
}

const uniqueViolation = '23505'
const activeNameIndex = 'api_tokens_active_name'
const tokenColumns = 'name, created_at, expires_at, last_used_at, revoked_at, roles'

// Looking a token up and recording its use are what requests do, so those two are named
// statements, planned once per connection; both go through the digest's unique index.
// The driver reads a timestamptz as a Date, to the millisecond a Date holds.
export class PostgresApiTokenStore implements ApiTokenStore {
  constructor (private readonly runQuery: RunPostgresQuery) {}

  async create ({ name, digest, createdAt, expiresAt, roles = null }: NewApiToken): Promise<StoredApiToken> {
    try {
      await this.runQuery({
        text: 'INSERT INTO api_tokens (name, digest, created_at, expires_at, roles) VALUES ($1, $2, $3, $4, $5)',
        values: [name, digest, createdAt, expiresAt, roles],
      })
    } catch (error) {
      throw isActiveNameTaken(error) ? new TokenNameTakenError(name) : error
    }
    return { name, createdAt, expiresAt, lastUsedAt: null, revokedAt: null, roles }
  }

  async findByDigest (digest: Buffer): Promise<StoredApiToken | undefined> {
    const { rows } = await this.runQuery<TokenRow>({
      name: 'select-api-token',
      text: `SELECT ${tokenColumns} FROM api_tokens WHERE digest = $1`,
      values: [digest],
    })
    const [row] = rows
    return row === undefined ? undefined : toStoredApiToken(row)
  }

  async recordUse (digest: Buffer, at: Date): Promise<void> {
    await this.runQuery({
      name: 'record-api-token-use',
      text: 'UPDATE api_tokens SET last_used_at = $2 WHERE digest = $1 AND (last_used_at IS NULL OR last_used_at < $2)',
      values: [digest, at],
    })
  }

  async list (): Promise<StoredApiToken[]> {
    const { rows } = await this.runQuery<TokenRow>({ text: `SELECT ${tokenColumns} FROM api_tokens ORDER BY created_at, id` })
    return rows.map(toStoredApiToken)
  }

  async revoke (name: string, at: Date): Promise<boolean> {
    const { rowCount } = await this.runQuery({
      text: 'UPDATE api_tokens SET revoked_at = $2 WHERE name = $1 AND revoked_at IS NULL',
      values: [name, at],
    })
    return (rowCount ?? 0) > 0
  }
}

function isActiveNameTaken (error: unknown): boolean {
  return error instanceof pg.DatabaseError && error.code === uniqueViolation && error.constraint === activeNameIndex
}

function toStoredApiToken (row: TokenRow): StoredApiToken {
  return {
    name: row.name,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
    roles: row.roles,
  }
}
