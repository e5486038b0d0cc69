import { randomBytes } from 'node:crypto'
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { type Config, ConfigError, loadConfig, parseTokenList } from './config.js'

// The only place that reads the environment, listens, and handles signals.
async function start (): Promise<void> {
  const config = withTokens(loadConfig(process.env))
  const app = await buildApp(config)
  try {
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

// With no API_TOKENS the service still starts, with a token minted for this run only.
function withTokens (config: Config): Config {
  if (parseTokenList(config.API_TOKENS).length > 0) return config
  const minted = randomBytes(32).toString('base64url')
  process.stdout.write([
    '',
    'WARNING: API_TOKENS is not set, so this token was minted for this run only.',
    'It stops working when the service restarts; set API_TOKENS to keep tokens across restarts.',
    `  API token: ${minted}`,
    '',
    '',
  ].join('\n'))
  return { ...config, API_TOKENS: minted }
}

start().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`)
  } else {
    process.stderr.write(`the service could not start: ${error instanceof Error ? error.stack : String(error)}\n`)
  }
  process.exitCode = 1
})
