import { join } from 'node:path'
import { type CommandResult, runCommand } from './run-command.js'

// `npm run token` is `node scripts/build.mjs --quiet && node dist/src/token-cli.js`; `npm test` has built it.
const tokenCli = join(import.meta.dirname, '..', '..', 'dist', 'src', 'token-cli.js')

// Runs `npm run token -- ...args` on the database, with nothing else in its environment.
export async function token (databaseUrl: string, ...args: string[]): Promise<CommandResult> {
  return runCommand(process.execPath, [tokenCli, ...args], {
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl }, timeout: 20_000,
  })
}

export interface ListedToken {
  name: string
  createdAt: string
  expiresAt: string | null
  lastUsedAt: string | null
  revokedAt: string | null
  status: string
  // 'every role', or the roles it holds.
  roles: string | string[]
}

export async function listed (databaseUrl: string): Promise<ListedToken[]> {
  const result = await token(databaseUrl, 'list', '--json')
  if (result.code !== 0) throw new Error(`list --json failed: ${result.stderr}`)
  return JSON.parse(result.stdout) as ListedToken[]
}
