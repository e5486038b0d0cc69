import { type Static, type TSchema, Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { token68Source } from './auth/token68.js'

// Every setting, described once. The README's configuration table follows this schema, and
// loadConfig refuses a bad value with the variable's name and what it accepts.
export const ConfigSchema = Type.Object({
  PORT: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: 3000,
    description: 'an integer from 0 to 65535',
  }),
  HOST: Type.String({
    minLength: 1,
    default: '127.0.0.1',
    description: 'a host name or IP address to listen on',
  }),
  DATABASE_URL: Type.String({
    pattern: '^(sqlite:.+|postgres(ql)?://.+)$',
    default: 'sqlite:./data/plants.db',
    description: '"sqlite:<path>" (the file and its folder are created on first start) or "postgres://user@host:port/database"',
  }),
  DATABASE_POOL_SIZE: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: 10,
    description: 'the most connections one instance opens to PostgreSQL, an integer from 1 to 1000',
  }),
  API_TOKENS: Type.String({
    pattern: `^\\s*(${token68Source})?\\s*(,\\s*(${token68Source})?\\s*)*$`,
    default: '',
    description: 'a comma-separated list of bearer tokens, each of A-Z a-z 0-9 - . _ ~ + / and then any "=" padding',
  }),
  LOG_LEVEL: Type.Union([
    Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'),
    Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent'),
  ], { default: 'info', description: 'one of fatal, error, warn, info, debug, trace, silent' }),
  BASE_PATH: Type.String({
    pattern: '^(/[A-Za-z0-9._~-]+)*$',
    default: '',
    description: 'empty, or a path prefix such as /api/v1 (no trailing slash)',
  }),
  REQUEST_TIMEOUT: Type.Integer({
    minimum: 100,
    maximum: 600_000,
    default: 30_000,
    description: 'the time in milliseconds a request may take to arrive in full, from 100 to 600000',
  }),
  BODY_LIMIT: Type.Integer({
    minimum: 64,
    maximum: 10_485_760,
    default: 16_384,
    description: 'the largest accepted request body in bytes, an integer from 64 to 10485760',
  }),
  MAX_CONNECTIONS: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 10_000,
    description: 'the most client connections open at once, from 1 to 1000000; more are refused',
  }),
  MAX_UNANSWERED_REQUESTS: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: 16,
    description: 'the most requests one connection may have sent and not yet had answered (pipelining), from 1 to 1000; a connection that sends more is closed',
  }),
  RATE_LIMIT_WINDOW: Type.Integer({
    minimum: 1,
    maximum: 86_400,
    default: 60,
    description: 'the length in seconds of the window the rate limits count in, from 1 to 86400',
  }),
  RATE_LIMIT_PER_CREDENTIAL: Type.Integer({
    minimum: 1,
    maximum: 1_000_000_000,
    default: 60_000,
    description: 'the most requests to protected operations one credential may make in a window, from 1 to 1000000000',
  }),
  RATE_LIMIT_PER_ADDRESS: Type.Integer({
    minimum: 1,
    maximum: 1_000_000_000,
    default: 6000,
    description: 'the most requests to public operations (but /healthz and /readyz) one client address may make in a window, from 1 to 1000000000',
  }),
  RATE_LIMIT_FAILED_AUTH: Type.Integer({
    minimum: 1,
    maximum: 1_000_000_000,
    default: 30,
    description: 'the most failed authentications one client address may have in a window before its requests to protected operations are refused until the window ends, from 1 to 1000000000',
  }),
})

export type Config = Static<typeof ConfigSchema>

export class ConfigError extends Error {
  constructor (readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((problem) => `  ${problem}`).join('\n')}`)
    this.name = 'ConfigError'
  }
}

// Reads the settings from an environment; an unset or empty variable takes its default.
export function loadConfig (environment: Readonly<Record<string, string | undefined>>): Config {
  const properties: Record<string, TSchema> = ConfigSchema.properties
  const settings: Record<string, unknown> = {}
  for (const [name, schema] of Object.entries(properties)) {
    const value = environment[name]
    if (value !== undefined && value !== '') settings[name] = convert(value, schema)
  }
  const candidate = Value.Default(ConfigSchema, settings)
  if (Value.Check(ConfigSchema, candidate)) return candidate

  const problems = new Map<string, string>()
  for (const error of Value.Errors(ConfigSchema, candidate)) {
    const name = error.path.slice(1)
    problems.set(name, `${name}=${shownValue(name, environment[name])} is not valid: expected ${properties[name]?.description}`)
  }
  throw new ConfigError([...problems.values()])
}

// Start-up errors end up in logs: a bad token list is not repeated, nor a database password.
function shownValue (name: string, value: string | undefined): string {
  if (name === 'API_TOKENS') return '(not shown)'
  if (name === 'DATABASE_URL' && value !== undefined) return JSON.stringify(withoutPassword(value))
  return JSON.stringify(value)
}

function withoutPassword (databaseUrl: string): string {
  if (!URL.canParse(databaseUrl)) return '(not shown: not a URL)'
  const url = new URL(databaseUrl)
  if (url.password !== '') url.password = '***'
  if (url.searchParams.has('password')) url.searchParams.set('password', '***')
  return url.toString()
}

// Only plain decimal digits become an integer: "3000.5", "0x10" and "1e3" stay strings and
// are refused, where a looser conversion would quietly pick another port or limit.
function convert (value: string, schema: TSchema): unknown {
  return schema.type === 'integer' && /^\d+$/.test(value) ? Number(value) : value
}

export function parseTokenList (tokens: string): string[] {
  return tokens.split(',').map((token) => token.trim()).filter((token) => token !== '')
}
