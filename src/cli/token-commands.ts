import { issueManagedToken, tokenStatus } from '../auth/managed-token.js'
import { type ApiTokenStore, type StoredApiToken, TokenNameTakenError } from '../store/api-token-store.js'
import type { TokenCommand } from './token-command-line.js'

export interface CommandOutput {
  // What a script reads: the token, the list, the outcome.
  readonly stdout: (text: string) => void
  // What a person reads beside it, and why a command failed.
  readonly stderr: (text: string) => void
}

type StoreCommand = Exclude<TokenCommand, { kind: 'help' }>

// Runs the command on the store; resolves with the exit status. Rejects with what the store
// rejected with, but for the refusals the command explains itself.
export async function runTokenCommand (command: StoreCommand, tokens: ApiTokenStore, output: CommandOutput, now = new Date()): Promise<number> {
  switch (command.kind) {
    case 'create': return createToken(command, tokens, output)
    case 'list': return listTokens(command, tokens, output, now)
    case 'revoke': return revokeToken(command, tokens, output, now)
  }
}

// The token is printed once, alone on its line of stdout, so that a script can capture it; the
// store keeps its digest only.
async function createToken ({ name, createdAt, expiresAt, roles }: Extract<StoreCommand, { kind: 'create' }>, tokens: ApiTokenStore, output: CommandOutput): Promise<number> {
  let token: string
  try {
    ({ token } = await issueManagedToken(tokens, { name, expiresAt, roles, now: createdAt }))
  } catch (error) {
    if (!(error instanceof TokenNameTakenError)) throw error
    output.stderr(`a token named ${name} exists and is not revoked (it may have expired): ` +
      `revoke it first (npm run token -- revoke ${name}) or pick another name\n`)
    return 1
  }
  output.stdout(`${token}\n`)
  output.stderr([
    `created token ${name}, which ${expiresAt === null ? 'never expires' : `expires at ${expiresAt.toISOString()}`}` +
      ` and holds ${describeRoles(roles)}`,
    'store it now: it is not shown again',
    'use it in the header: Authorization: Bearer <token>',
    '',
  ].join('\n'))
  return 0
}

async function listTokens ({ json }: Extract<StoreCommand, { kind: 'list' }>, tokens: ApiTokenStore, output: CommandOutput, now: Date): Promise<number> {
  const stored = await tokens.list()
  if (json) {
    // Field by field: whatever else a store's object may hold is never printed.
    const listed = stored.map((token) => {
      const { name, createdAt, expiresAt, lastUsedAt, revokedAt, roles } = token
      return { name, createdAt, expiresAt, lastUsedAt, revokedAt, status: tokenStatus(token, now), roles: roles ?? 'every role' }
    })
    output.stdout(`${JSON.stringify(listed, null, 2)}\n`)
  } else if (stored.length === 0) {
    output.stdout('there are no tokens; create one with: npm run token -- create --name NAME [--expires 30d]\n')
  } else {
    output.stdout(tokenTable(stored, now))
  }
  return 0
}

async function revokeToken ({ name }: Extract<StoreCommand, { kind: 'revoke' }>, tokens: ApiTokenStore, output: CommandOutput, now: Date): Promise<number> {
  if (!await tokens.revoke(name, now)) {
    output.stderr(`no token named ${JSON.stringify(name)} is left to revoke: there is none, or it is revoked already (npm run token -- list)\n`)
    return 1
  }
  output.stdout(`revoked token ${name}\n`)
  return 0
}

function describeRoles (roles: readonly string[] | null): string {
  return roles === null ? 'every role' : `the role${roles.length === 1 ? '' : 's'} ${roles.join(', ')}`
}

// Columns padded to their widest cell, times in UTC as the store keeps them.
function tokenTable (tokens: readonly StoredApiToken[], now: Date): string {
  const timeOrNever = (time: Date | null): string => time?.toISOString() ?? 'never'
  const rows = [
    ['NAME', 'CREATED', 'EXPIRES', 'LAST USED', 'STATUS', 'ROLES'],
    ...tokens.map((token) => [token.name, token.createdAt.toISOString(), timeOrNever(token.expiresAt),
      timeOrNever(token.lastUsedAt), tokenStatus(token, now), token.roles?.join(',') ?? 'every role']),
  ]
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd() + '\n').join('')
}
