import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { provisionDefaultToken } from './auth/default-token.js'
import { type Config, ConfigError, loadConfig, parseTokenList } from './config.js'
import type { ApiTokenStore } from './store/api-token-store.js'
import { StoreUnavailableError } from './store/store-errors.js'

// The only place that reads the environment, listens, and handles signals.
async function start (): Promise<void> {
  const config = loadConfig(process.env)
  const app = await buildApp(config)
  try {
    if (!hasConfiguredCredentials(config)) await announceManagedTokens(app.apiTokens)
    await app.listen({ port: config.PORT, host: config.HOST })
  } catch (error) {
    await app.close()
    throw error
  }
  // SIGTERM and SIGINT stop new connections, let in-flight requests finish (a stalled one is
  // cut after REQUEST_TIMEOUT), then close the store; a second signal, or REQUEST_TIMEOUT plus
  // 10 seconds, ends the process anyway.
  closeWithGrace({ delay: config.REQUEST_TIMEOUT + 10_000 }, async ({ signal, err }) => {
    if (err !== undefined) app.log.error({ err }, 'shutting down after an uncaught error')
    else app.log.info({ signal }, 'shutting down')
    await app.close()
  })
}

function hasConfiguredCredentials (config: Config): boolean {
  return parseTokenList(config.API_TOKENS).length > 0 || config.JWT_ISSUER !== ''
}

// With no credentials configured, only managed tokens are accepted: the first run creates one and
// shows it this once; later runs say how to create another.
async function announceManagedTokens (tokens: ApiTokenStore): Promise<void> {
  const howToCreate = 'Create a token with: npm run token -- create --name <name>   (see README, "Credentials")'
  let outcome
  try {
    outcome = await provisionDefaultToken(tokens)
  } catch (error) {
    // The service starts while its database is down, as it always has: tokens are checked once
    // the database is back, and the first run's token is created at the next start.
    if (!(error instanceof StoreUnavailableError)) throw error
    process.stdout.write(`\nThe store is not reachable, so its managed tokens could not be checked.\n${howToCreate}\n\n`)
    return
  }
  const lines = outcome.created
    ? [
        'A managed API token named "default" was created. It is shown this once; keep it now:',
        `  API token: ${outcome.token}`,
        'Send it as "Authorization: Bearer <token>". It keeps working across restarts until revoked',
        '(npm run token -- revoke default).',
        howToCreate,
      ]
    : outcome.activeTokens === 0
      ? ['WARNING: no API_TOKENS, no JWT_ISSUER, and no managed token is active: every plant request gets 401.', howToCreate]
      : [`No API_TOKENS or JWT_ISSUER: the ${outcome.activeTokens} active managed token(s) in the store are accepted.`, howToCreate]
  process.stdout.write(`\n${lines.join('\n')}\n\n`)
}

start().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`)
  } else {
    process.stderr.write(`the service could not start: ${error instanceof Error ? error.stack : String(error)}\n`)
  }
  process.exitCode = 1
})
