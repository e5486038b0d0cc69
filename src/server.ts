import { randomBytes } from 'node:crypto'
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { ConfigError, loadConfig, parseTokenList } from './config.js'

// The only place that reads the environment, listens, and handles signals.
async function start (): Promise<void> {
  const config = loadConfig(process.env)
  if (parseTokenList(config.API_TOKENS).length === 0) {
    config.API_TOKENS = randomBytes(32).toString('base64url')
    process.stdout.write([
      '',
      'WARNING: API_TOKENS is not set, so this token was minted for this run only.',
      'It stops working when the service restarts; set API_TOKENS to keep tokens across restarts.',
      `  API token: ${config.API_TOKENS}`,
      '',
      '',
    ].join('\n'))
  }

  const app = await buildApp(config)
  // SIGTERM and SIGINT stop new connections, let in-flight requests finish, then close the
  // store; a second signal, or 10 seconds, ends the process anyway.
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err !== undefined) app.log.error({ err }, 'shutting down after an uncaught error')
    else app.log.info({ signal }, 'shutting down')
    await app.close()
  })
  await app.listen({ port: config.PORT, host: config.HOST })
}

start().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`)
  } else {
    process.stderr.write(`the service could not start: ${error instanceof Error ? error.stack : String(error)}\n`)
  }
  process.exitCode = 1
})
