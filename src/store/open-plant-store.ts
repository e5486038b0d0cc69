import type { BatchObserver, StoreBackend } from './batch-observer.js'
import type { ActiveWriterCount } from './group-commit.js'
import type { PlantStore } from './plant-store.js'
import { PostgresPlantStore } from './postgres/postgres-plant-store.js'
import { backgroundFailureConsequence, SqlitePlantStore } from './sqlite/sqlite-plant-store.js'

export interface PlantStoreSettings {
  readonly DATABASE_URL: string
  readonly DATABASE_POOL_SIZE: number
  readonly DATABASE_FAILOVER_WAIT: number
}

export interface PlantStoreLogger {
  warn (details: object, message: string): void
}

// The observer a backend's batches are told to, if any.
export type ObserveBatches = (backend: StoreBackend) => BatchObserver | undefined

// DATABASE_URL picks the backend: `sqlite:<path>` is a SQLite file, relative to the working
// directory; `postgres://` or `postgresql://` is a PostgreSQL database. The config schema has
// already refused any other form. activeWriters: the writers whose next writes a batch may wait
// a moment for (src/store/group-commit.ts); the service counts the connections that write.
export async function openPlantStore (
  settings: PlantStoreSettings,
  logger: PlantStoreLogger,
  observeBatches: ObserveBatches = () => undefined,
  activeWriters?: ActiveWriterCount
): Promise<PlantStore> {
  const { DATABASE_URL: databaseUrl } = settings
  if (databaseUrl.startsWith('sqlite:')) {
    return SqlitePlantStore.open({
      filename: databaseUrl.slice('sqlite:'.length),
      batchObserver: observeBatches('sqlite'),
      activeWriters,
      onBackgroundFailure: (error) => logger.warn({ err: error }, `the SQLite background thread failed: ${backgroundFailureConsequence}`),
    })
  }
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    return PostgresPlantStore.open({
      connectionString: databaseUrl,
      poolSize: settings.DATABASE_POOL_SIZE,
      failoverWaitMs: settings.DATABASE_FAILOVER_WAIT * 1000,
      onIdleConnectionError: (error) => logger.warn({ err: error }, 'an idle PostgreSQL connection failed and was dropped'),
      onConnectionRefused: oncePerMinute((error) => logger.warn({ err: error }, 'PostgreSQL refused a connection: requests get a 503 until it takes them again')),
      batchObserver: observeBatches('postgres'),
      activeWriters,
    })
  }
  throw new Error('unsupported DATABASE_URL')
}

// A refusal that lasts is told once a minute, not once per request.
function oncePerMinute (tell: (error: Error) => void): (error: Error) => void {
  let toldAt = Number.NEGATIVE_INFINITY
  return (error) => {
    const now = performance.now()
    if (now - toldAt < 60_000) return
    toldAt = now
    tell(error)
  }
}
