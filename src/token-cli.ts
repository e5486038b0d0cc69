import { parseTokenCommandLine, tokenUsage, UsageError } from './cli/token-command-line.js'
import { type CommandOutput, runTokenCommand } from './cli/token-commands.js'
import { ConfigError, loadConfig, withoutPassword } from './config/config.js'
import { loadOpenApiDocument, roleNamesOf } from './openapi/openapi-document.js'
import { openPlantStore } from './store/open-plant-store.js'
import { StoreUnavailableError } from './store/store-errors.js'

// `npm run token -- <command>`: creates, lists and revokes the store's managed API tokens in the
// database DATABASE_URL names, migrated first as the service would. Exit status: 0 done, 1
// refused or failed, 2 a command line it does not take (tokenUsage).
const output: CommandOutput = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
}

async function runTokenCli (args: readonly string[]): Promise<number> {
  let command
  try {
    command = parseTokenCommandLine(args, new Date(), roleNamesOf(loadOpenApiDocument().document))
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    output.stderr(`${error.message}\n\n${tokenUsage}`)
    return 2
  }
  if (command.kind === 'help') {
    output.stdout(tokenUsage)
    return 0
  }
  const config = loadConfig(process.env)
  try {
    const store = await openPlantStore(config, { warn: (_details, message) => output.stderr(`${message}\n`) })
    try {
      return await runTokenCommand(command, store.apiTokens, output)
    } finally {
      await store.close()
    }
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error
    output.stderr(`the store at DATABASE_URL=${JSON.stringify(withoutPassword(config.DATABASE_URL))} is unavailable` +
      `${reasonOf(error.cause)}; try again once it answers\n`)
    return 1
  }
}

// Expected failures are one line (a bad configuration, one per variable), never a stack trace.
runTokenCli(process.argv.slice(2)).then((status) => { process.exitCode = status }, (error: unknown) => {
  output.stderr(error instanceof ConfigError ? `${error.message}\n` : `token: ${process.argv[2]} failed${reasonOf(error)}\n`)
  process.exitCode = 1
})

// A connection refused on every address of a host is an AggregateError with no message: its code says it.
function reasonOf (error: unknown): string {
  if (!(error instanceof Error)) return error === undefined ? '' : `: ${String(error)}`
  const reason = error.message === '' ? (error as NodeJS.ErrnoException).code ?? error.name : error.message
  return `: ${reason}${error.cause instanceof Error ? reasonOf(error.cause) : ''}`.replaceAll('\n', ' ')
}
