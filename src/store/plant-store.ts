import type { ApiTokenStore } from './api-token-store.js'
import type { MigrationReport } from './migration-runner.js'
import type { PlantRow } from './plant-row.js'
import type { Outbox } from './outbox.js'
import type { WebhookStore } from './webhook-store.js'

export { type PlantRow, plantWithId } from './plant-row.js'

export interface CreatePlantOutcome {
  readonly plant: PlantRow
  // false when the same plant was already stored: a safe retry that stored nothing new.
  readonly created: boolean
}

// What a write carries besides the plant: the trace of the request that made it, which its
// webhooks link to.
export interface WriteContext {
  readonly traceparent?: string | undefined
}

export interface PlantPage {
  readonly plants: readonly PlantRow[]
  // Whether a plant with a greater id was stored when the page was read.
  readonly more: boolean
}

// Every backend implements this and passes the shared contract suite in test/store/.
export interface PlantStore {
  // The managed API tokens, in the same database.
  readonly apiTokens: ApiTokenStore
  // The webhook endpoints and their messages, in the same database.
  readonly webhooks: WebhookStore
  // What the store is and where, for the start-up line ("SQLite file ./data/plants.db"), with no
  // password in it.
  readonly description: string
  // What opening the store migrated; undefined while a database that could not be reached at
  // start (PostgreSQL starting after the service) has not been migrated yet.
  readonly migrationsAtOpen?: MigrationReport | undefined
  // Stores the plant atomically, in one insert-or-compare. Rejects with PlantConflictError when
  // the id is taken by a plant with another document, and with StoreUnavailableError when the
  // backend cannot be reached for now.
  // The webhooks' messages of the change are written in the same transaction (useOutbox).
  // The write is in the store's queue when the call returns, before anything is awaited, so
  // writes are committed in the order of the calls: pipelined requests rely on it
  // (src/http/request-turns.ts).
  createPlant (plant: PlantRow, context?: WriteContext): Promise<CreatePlantOutcome>
  // The plant stored under the id, or undefined when there is none. Rejects with
  // StoreUnavailableError when the backend cannot be reached for now.
  getPlant (id: bigint): Promise<PlantRow | undefined>
  // Up to `limit` plants in ascending order of id, those after `after` when it is given (keyset,
  // so a page costs the same wherever it starts), and whether more follow.
  listPlants (after: bigint | undefined, limit: number): Promise<PlantPage>
  // Deletes the plant, durably, in the order of the creates and deletes the store received:
  // true when there was one, false when no plant had the id. Queued as createPlant is.
  deletePlant (id: bigint, context?: WriteContext): Promise<boolean>
  // Where the messages of the changes committed from now on come from (none until called).
  useOutbox (outbox: Outbox): void
  // Resolves when the backend can serve requests; rejects with StoreUnavailableError otherwise.
  checkReady (): Promise<void>
  close (): Promise<void>
}
