import { loadConfig } from './config/config.js'
import { openPlantStore } from './store/open-plant-store.js'

// `npm run migrate`: applies the store's migrations to DATABASE_URL and exits, without
// starting the server. Exits 1, saying why, when the database cannot be reached or migrated.
async function migrate (): Promise<void> {
  const config = loadConfig(process.env)
  const store = await openPlantStore(config, { warn: (_details, message) => process.stderr.write(`${message}\n`) })
  try {
    await store.checkReady()
  } finally {
    await store.close()
  }
  process.stdout.write('migrations are applied; the store is ready\n')
}

migrate().catch((error: unknown) => {
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : ''
  process.stderr.write(`migration failed: ${error instanceof Error ? error.message : String(error)}${cause}\n`)
  process.exitCode = 1
})
