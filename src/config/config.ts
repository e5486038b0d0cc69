import type { Static, TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { jwtConfigProblems } from './jwt-checks.js'
import { ConfigSchema, longestRetryWaitSeconds } from './settings.js'

export { asymmetricJwtAlgorithms, ConfigSchema } from './settings.js'

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
  if (Value.Check(ConfigSchema, candidate)) {
    const problems = [...jwtConfigProblems(candidate), ...webhookConfigProblems(candidate)]
    if (problems.length > 0) throw new ConfigError(problems)
    return candidate
  }

  const problems = new Map<string, string>()
  for (const error of Value.Errors(ConfigSchema, candidate)) {
    const name = error.path.slice(1)
    problems.set(name, `${name}=${shownValue(name, environment[name])} is not valid: expected ${properties[name]?.description}`)
  }
  throw new ConfigError([...problems.values()])
}

// Start-up errors end up in logs: a bad token list is not repeated, nor a database password.
function shownValue (name: string, value: string | undefined): string {
  if (name === 'API_TOKENS' || name === 'METRICS_TOKEN') return '(not shown)'
  if (name === 'DATABASE_URL' && value !== undefined) return JSON.stringify(withoutPassword(value))
  return JSON.stringify(value)
}

export function withoutPassword (databaseUrl: string): string {
  if (!URL.canParse(databaseUrl)) return '(not shown: not a URL)'
  const url = new URL(databaseUrl)
  if (url.password !== '') url.password = '***'
  if (url.searchParams.has('password')) url.searchParams.set('password', '***')
  return url.toString()
}

// Only plain decimal digits become an integer: "3000.5", "0x10" and "1e3" stay strings and
// are refused, where a looser conversion would quietly pick another port or limit.
function convert (value: string, schema: TSchema): unknown {
  if (schema.type === 'integer' && /^\d+$/.test(value)) return Number(value)
  if (schema.type === 'number' && /^\d+(\.\d+)?$/.test(value)) return Number(value)
  return value
}

export function parseTokenList (tokens: string): string[] {
  return tokens.split(',').map((token) => token.trim()).filter((token) => token !== '')
}

// The problems of the webhook settings that their patterns cannot show.
function webhookConfigProblems (config: Pick<Config, 'WEBHOOK_RETRY_SCHEDULE'>): string[] {
  const tooLong = config.WEBHOOK_RETRY_SCHEDULE.split(',').filter((seconds) => Number(seconds) > longestRetryWaitSeconds)
  if (tooLong.length === 0) return []
  return [`WEBHOOK_RETRY_SCHEDULE=${JSON.stringify(config.WEBHOOK_RETRY_SCHEDULE)} is not valid: each wait must be at most ${longestRetryWaitSeconds} seconds (30 days), not ${tooLong.join(', ')}`]
}
