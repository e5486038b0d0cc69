import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import { type DefaultTokenOutcome, provisionDefaultToken } from './auth/default-token.js'
import { type Config, ConfigError, loadConfig, parseTokenList } from './config/config.js'
import { stdoutLogDestination } from './http/log-destination.js'
import { ListenError } from './http/listen-error.js'
import { startupSummary } from './startup-summary.js'
import { StoreUnavailableError } from './store/store-errors.js'
import { attemptEndsWithinMs } from './webhooks/endpoint-connection.js'

// The only place that reads the environment, listens, and handles signals.
async function start (): Promise<void> {
  const config = loadConfig(process.env)
  const terminal = process.stdout.isTTY === true
  const logFormat = config.LOG_FORMAT === 'auto' ? (terminal ? 'pretty' : 'json') : config.LOG_FORMAT
  // NO_COLOR, when set and not empty, asks every program for text without colours (no-color.org).
  const logColors = terminal && (process.env.NO_COLOR ?? '') === ''
  const app = await buildApp({ ...config, LOG_FORMAT: logFormat }, { logColors })
  try {
    if (!hasConfiguredCredentials(config)) await announceManagedTokens(app)
    // Loaded before listening, so that a failure of the app itself is not told as one to listen.
    await app.ready()
  } catch (error) {
    await app.close()
    throw error
  }
  try {
    await app.listen({ port: config.PORT, host: config.HOST, listenTextResolver: startupSummary(app, config) })
  } catch (error) {
    await app.close()
    throw new ListenError(config, error)
  }
  // SIGTERM and SIGINT stop new connections, let in-flight requests finish (a stalled one is
  // cut after REQUEST_TIMEOUT) and the webhook attempts in flight end (within WEBHOOK_TIMEOUT and
  // a fifteenth), then close the store; a second signal, or the longer of the two plus 10
  // seconds, ends the process anyway.
  const webhookAttemptsEndWithinMs = attemptEndsWithinMs(config.WEBHOOK_TIMEOUT * 1000)
  closeWithGrace({ delay: Math.ceil(Math.max(config.REQUEST_TIMEOUT, webhookAttemptsEndWithinMs)) + 10_000 }, async ({ signal, err }) => {
    if (err !== undefined) app.log.error({ err }, 'shutting down after an uncaught error')
    else app.log.info({ signal }, 'shutting down')
    app.beginShutdown()
    await app.close()
  })
}

function hasConfiguredCredentials (config: Config): boolean {
  return parseTokenList(config.API_TOKENS).length > 0 || config.JWT_ISSUER !== ''
}

// With no credentials configured, only managed tokens are accepted: the first run creates one and
// shows it this once; later runs say how to create another. A store that cannot be reached yet
// (PostgreSQL starting after the service) is asked again every few seconds until it answers, so
// that a first run still ends with a token.
async function announceManagedTokens (app: FastifyInstance): Promise<void> {
  const announce = async (): Promise<boolean> => {
    try {
      printAfterLogLines(`\n${describe(await provisionDefaultToken(app.apiTokens)).join('\n')}\n\n`)
      return true
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error
      return false
    }
  }
  if (await announce()) return
  printAfterLogLines('\nThe store cannot be reached yet: its managed tokens are checked (and a first token\n' +
    `created if it has none) once it can.\n${howToCreate}\n\n`)
  // A try can outlast the interval (a connection timeout, a migration in progress), so the next
  // is scheduled when the last has ended: never two at once.
  let retry: NodeJS.Timeout
  const scheduleRetry = (): void => {
    retry = setTimeout(() => {
      announce().then((done) => { if (!done) scheduleRetry() }, (error: unknown) => {
        app.log.error({ err: error }, 'the managed tokens could not be checked')
      })
    }, storeRetryIntervalMs).unref()
  }
  scheduleRetry()
  app.addHook('onClose', async () => clearTimeout(retry))
}

// Log lines are written at the end of the turn that logged them: those already logged go first.
function printAfterLogLines (text: string): void {
  stdoutLogDestination().flush()
  process.stdout.write(text)
}

const storeRetryIntervalMs = 5000
const howToCreate = 'Create a token with: npm run token -- create --name <name>   (see docs/credentials.md)'

function describe (outcome: DefaultTokenOutcome): string[] {
  if (outcome.created) {
    return [
      'A managed API token named "default" was created. It is shown this once; keep it now:',
      `  API token: ${outcome.token}`,
      'Send it as "Authorization: Bearer <token>". It keeps working across restarts until revoked',
      '(npm run token -- revoke default).',
      howToCreate,
    ]
  }
  if (outcome.activeTokens === 0) {
    return ['WARNING: no API_TOKENS, no JWT_ISSUER, and no managed token is active: every plant request gets 401.', howToCreate]
  }
  return [`No API_TOKENS or JWT_ISSUER: the ${outcome.activeTokens} active managed token(s) in the store are accepted.`, howToCreate]
}

start().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof ListenError) {
    process.stderr.write(`${error.message}\n`)
  } else {
    process.stderr.write(`the service could not start: ${error instanceof Error ? error.stack : String(error)}\n`)
  }
  process.exitCode = 1
})
