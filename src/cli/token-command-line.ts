import { parseArgs } from 'node:util'

export type TokenCommand =
  | { readonly kind: 'help' }
  | {
    readonly kind: 'create'
    readonly name: string
    readonly createdAt: Date
    readonly expiresAt: Date | null
    // null: every role.
    readonly roles: readonly string[] | null
  }
  | { readonly kind: 'list', readonly json: boolean }
  | { readonly kind: 'revoke', readonly name: string }

// Names show in access logs and in `list`'s columns: kept short, and free of spaces and quotes.
const tokenName = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
// Every command takes --help (or -h) as well as its own options.
const helpOption = { help: { type: 'boolean', short: 'h' } } as const

export const tokenUsage = `usage: npm run token -- <command>

commands:
  create --name NAME [--expires WHEN] [--roles ROLE,ROLE...]
      Mints a token, stores its SHA-256 digest (never the token) and prints the token on
      stdout, this once. NAME: 1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit.
      WHEN: 30m, 12h or 30d (minutes, hours or days from now); an ISO-8601 date, 2027-01-31
      (at midnight UTC); or a date and time with its offset, 2027-01-31T18:00:00Z or
      2027-01-31T18:00+02:00. Without --expires the token never expires.
      ROLE: a role an operation of openapi.yaml names (plants:read, plants:write, ...): the
      token may call the operations whose roles it holds. Without --roles it holds every role.
  list [--json]
      Every token, revoked and expired ones included, oldest first. Never the tokens.
  revoke NAME
      Revokes the token named NAME that is not revoked yet. Running instances refuse it
      within TOKEN_CACHE_TTL seconds.
  help
      Shows this.

The store is DATABASE_URL's, as for the service (by default sqlite:./data/plants.db).
Exit status: 0 done; 1 refused or failed (name taken, no such token, store unavailable,
bad configuration); 2 a command line that is not one of these.
`

// What args (the words after `npm run token --`) ask for, at `now`. A UsageError says why
// they ask for nothing the tool does.
// `knownRoles` are the roles openapi.yaml's operations name; --roles may name no other.
export function parseTokenCommandLine (args: readonly string[], now: Date, knownRoles: readonly string[] = []): TokenCommand {
  const [command, ...rest] = args
  switch (command) {
    case undefined:
      throw new UsageError('no command given')
    case 'help': case '--help': case '-h':
      return { kind: 'help' }
    case 'create': {
      const { values, positionals } = parseCommand(command, () => parseArgs({
        args: rest, options: { ...helpOption, name: { type: 'string' }, expires: { type: 'string' }, roles: { type: 'string' } }, allowPositionals: true,
      }))
      if (values.help === true) return { kind: 'help' }
      if (positionals.length > 0) throw new UsageError(`create takes options only, not ${JSON.stringify(positionals[0])}`)
      const { name, expires } = values
      if (name === undefined) throw new UsageError('create needs --name NAME')
      if (!tokenName.test(name)) {
        throw new UsageError(`--name ${JSON.stringify(name)} is not a token name: 1 to 64 of A-Z a-z 0-9 . _ - starting with a letter or digit`)
      }
      const expiresAt = expires === undefined ? null : parseTokenExpiry(expires, now)
      const roles = values.roles === undefined ? null : parseRoles(values.roles, knownRoles)
      return { kind: 'create', name, createdAt: now, expiresAt, roles }
    }
    case 'list': {
      const { values, positionals } = parseCommand(command, () => parseArgs({
        args: rest, options: { ...helpOption, json: { type: 'boolean' } }, allowPositionals: true,
      }))
      if (values.help === true) return { kind: 'help' }
      if (positionals.length > 0) throw new UsageError(`list takes --json only, not ${JSON.stringify(positionals[0])}`)
      return { kind: 'list', json: values.json === true }
    }
    case 'revoke': {
      const { values, positionals } = parseCommand(command, () => parseArgs({ args: rest, options: helpOption, allowPositionals: true }))
      if (values.help === true) return { kind: 'help' }
      const [name] = positionals
      if (name === undefined || positionals.length > 1) throw new UsageError(`revoke takes one NAME, not ${positionals.length}`)
      return { kind: 'revoke', name }
    }
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}`)
  }
}

// A comma-separated list of roles, each of those the spec names.
function parseRoles (text: string, knownRoles: readonly string[]): string[] {
  const roles = [...new Set(text.split(',').map((role) => role.trim()).filter((role) => role !== ''))]
  if (roles.length === 0) throw new UsageError('--roles needs at least one role (leave it out for every role)')
  const unknown = roles.filter((role) => !knownRoles.includes(role))
  if (unknown.length > 0) {
    throw new UsageError(`--roles: ${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} named by no operation of openapi.yaml, ` +
      `whose roles are ${knownRoles.length === 0 ? 'none' : knownRoles.join(', ')}`)
  }
  return roles
}

// parseArgs is strict by default: an unknown option, or one without its value, is a UsageError.
function parseCommand<Parsed> (command: string, parse: () => Parsed): Parsed {
  try {
    return parse()
  } catch (error) {
    throw new UsageError(`${command}: ${error instanceof Error ? error.message : String(error)}`)
  }
}

// A command line the tool cannot run: it says why, shows the usage and exits 2, before opening
// the store.
export class UsageError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'UsageError'
  }
}

const unitMs = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const
const duration = /^(\d+)([mhd])$/
// A date-time must say its offset: the same text read in the local time zone of whoever runs
// the tool would expire at another instant on another machine.
const isoDate = /^(\d{4})-(\d{2})-(\d{2})$/
const isoDateTime = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,3})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/
// The SQLite store keeps times as four-digit-year ISO text (migration 3).
const latestExpiry = Date.parse('9999-12-31T23:59:59.999Z')

const tokenExpiryForms = '30m, 12h or 30d (minutes, hours or days from now), an ISO-8601 date ' +
  '(2027-01-31, at midnight UTC) or date and time with its offset (2027-01-31T18:00:00Z, 2027-01-31T18:00+02:00)'

// When a token given `--expires text` at `now` expires; a UsageError when the text is none of
// tokenExpiryForms, or is not after `now`.
export function parseTokenExpiry (text: string, now: Date): Date {
  const expiresAt = expiryOf(text, now)
  if (expiresAt === undefined) throw new UsageError(`--expires ${JSON.stringify(text)} is not one of ${tokenExpiryForms}`)
  // NaN too: a duration beyond what a Date holds.
  if (!(expiresAt.getTime() <= latestExpiry)) throw new UsageError(`--expires ${text} is too far ahead: the latest expiry is 9999-12-31`)
  if (expiresAt.getTime() <= now.getTime()) {
    throw new UsageError(`--expires ${text} is not in the future: it is ${expiresAt.toISOString()}, and now is ${now.toISOString()}`)
  }
  return expiresAt
}

function expiryOf (text: string, now: Date): Date | undefined {
  const [, amount, unit] = duration.exec(text) ?? []
  if (amount !== undefined && unit !== undefined) return new Date(now.getTime() + Number(amount) * unitMs[unit as keyof typeof unitMs])
  const [, year, month, day] = isoDate.exec(text) ?? isoDateTime.exec(text) ?? []
  if (year === undefined || month === undefined || day === undefined) return undefined
  // Date.parse reads 2027-02-30 as March 2nd: the day must exist in its month.
  const date = `${year}-${month}-${day}`
  const midnight = Date.parse(`${date}T00:00Z`)
  if (Number.isNaN(midnight) || new Date(midnight).toISOString().slice(0, 10) !== date) return undefined
  return new Date(Date.parse(text))
}
