import type { FastifyInstance } from 'fastify'
import type { Config } from './config/config.js'
import type { MigrationReport } from './store/migration-runner.js'

// The one line a start logs once the service listens: where it listens, where its API reference
// is, and which store it uses, where, and what its migrations did. It keeps Fastify's
// "Server listening at <url>" opening, which tools already look for. Fastify logs a line per
// address it listens on; the addresses after the first (HOST=0.0.0.0 listens on every
// interface) get Fastify's plain line.
export function startupSummary (app: FastifyInstance, config: Pick<Config, 'BASE_PATH'>): (address: string) => string {
  let summarized = false
  return (address) => {
    if (summarized) return `Server listening at ${address}`
    summarized = true
    const store = app.plantStore
    return `Server listening at ${address}; API reference at ${address}${config.BASE_PATH}/docs; ` +
      `store: ${store.description}, ${describeMigrations(store.migrationsAtOpen)}`
  }
}

function describeMigrations (report: MigrationReport | undefined): string {
  if (report === undefined) return 'not reachable yet: its migrations are applied once it is'
  const migrated = report.appliedNow.length === 0 ? 'up to date' : `migrations ${report.appliedNow.join(', ')} applied now`
  return `schema version ${report.schemaVersion}, ${migrated}`
}
