import type { ApiTokenStore, NewApiToken, StoredApiToken } from '../api-token-store.js'
import { TokenNameTakenError } from '../api-token-store.js'
import { type Database, SqliteError } from './sqlite-driver.js'

// Runs a statement on the store's connection, or refuses it with a StoreUnavailableError when
// the store cannot run it now (closed, say); a transient failure becomes a StoreUnavailableError.
export type RunSqliteStatement = <T>(statement: () => T) => T

interface TokenRow {
  name: string
  created_at: string
  expires_at: string | null
  last_used_at: string | null
  revoked_at: string | null
  roles: string | null
}

const tokenColumns = 'name, created_at, expires_at, last_used_at, revoked_at, roles'

function prepareStatements (database: Database) {
  return {
    insert: database.prepare<[string, Buffer, string, string | null, string | null]>(
      'INSERT INTO api_tokens (name, digest, created_at, expires_at, roles) VALUES (?, ?, ?, ?, ?)'),
    selectByDigest: database.prepare<[Buffer], TokenRow>(`SELECT ${tokenColumns} FROM api_tokens WHERE digest = ?`),
    updateLastUse: database.prepare<[string, Buffer, string]>(
      'UPDATE api_tokens SET last_used_at = ? WHERE digest = ? AND (last_used_at IS NULL OR last_used_at < ?)'),
    selectAll: database.prepare<[], TokenRow>(`SELECT ${tokenColumns} FROM api_tokens ORDER BY created_at, id`),
    updateRevoked: database.prepare<[string, string]>('UPDATE api_tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL'),
  }
}

// Each write is one statement in autocommit, on the connection the plants' batches use; those
// run synchronously from start to commit, so a token statement never lands inside one.
// Times are stored as Date.toISOString gives them (see migration 3).
export class SqliteApiTokenStore implements ApiTokenStore {
  private readonly statements: ReturnType<typeof prepareStatements>

  constructor (database: Database, private readonly runStatement: RunSqliteStatement) {
    this.statements = prepareStatements(database)
  }

  async create ({ name, digest, createdAt, expiresAt, roles = null }: NewApiToken): Promise<StoredApiToken> {
    try {
      this.runStatement(() => this.statements.insert.run(name, digest, createdAt.toISOString(), expiresAt?.toISOString() ?? null,
        roles === null ? null : roles.join(' ')))
    } catch (error) {
      throw isActiveNameTaken(error) ? new TokenNameTakenError(name) : error
    }
    return { name, createdAt, expiresAt, lastUsedAt: null, revokedAt: null, roles }
  }

  async findByDigest (digest: Buffer): Promise<StoredApiToken | undefined> {
    const row = this.runStatement(() => this.statements.selectByDigest.get(digest))
    return row === undefined ? undefined : toStoredApiToken(row)
  }

  async recordUse (digest: Buffer, at: Date): Promise<void> {
    const time = at.toISOString()
    this.runStatement(() => this.statements.updateLastUse.run(time, digest, time))
  }

  async list (): Promise<StoredApiToken[]> {
    return this.runStatement(() => this.statements.selectAll.all()).map(toStoredApiToken)
  }

  async revoke (name: string, at: Date): Promise<boolean> {
    return this.runStatement(() => this.statements.updateRevoked.run(at.toISOString(), name)).changes > 0
  }
}

// The partial index on the names of tokens not revoked refused the insert. SQLite names the
// index's column, not the index; the digest's own unique constraint says api_tokens.digest.
function isActiveNameTaken (error: unknown): boolean {
  return error instanceof SqliteError && error.code === 'SQLITE_CONSTRAINT_UNIQUE' &&
    error.message.endsWith('api_tokens.name')
}

function toStoredApiToken (row: TokenRow): StoredApiToken {
  return {
    name: row.name,
    createdAt: new Date(row.created_at),
    expiresAt: dateOrNull(row.expires_at),
    lastUsedAt: dateOrNull(row.last_used_at),
    revokedAt: dateOrNull(row.revoked_at),
    roles: row.roles === null ? null : row.roles.split(' ').filter((role) => role !== ''),
  }
}

function dateOrNull (time: string | null): Date | null {
  return time === null ? null : new Date(time)
}
