import type { ApiTokenStore } from './api-token-store.js'
import type { MigrationReport } from './migrations.js'

// A plant as every backend keeps it: its id, a bigint because ids are int64 (a JavaScript number
// would merge ids that differ only above 2^53), and its document: the canonical JSON text
// (src/json/canonical-json.ts) of the properties openapi.yaml declares for a Plant. The store
// never looks inside the document, so a property added to the spec is stored with no change here.
export interface PlantRow {
  readonly id: bigint
  readonly document: string
}

export interface CreatePlantOutcome {
  readonly plant: PlantRow
  // false when the same plant was already stored: a safe retry that stored nothing new.
  readonly created: boolean
}

// Every backend implements this and passes the shared contract suite in test/store/.
export interface PlantStore {
  // The managed API tokens, in the same database.
  readonly apiTokens: ApiTokenStore
  // What the store is and where, for the start-up line ("SQLite file ./data/plants.db"), with no
  // password in it.
  readonly description: string
  // What opening the store migrated; undefined while a database that could not be reached at
  // start (PostgreSQL starting after the service) has not been migrated yet.
  readonly migrationsAtOpen?: MigrationReport | undefined
  // Stores the plant atomically, in one insert-or-compare. Rejects with PlantConflictError when
  // the id is taken by a plant with another document, and with StoreUnavailableError when the
  // backend cannot be reached for now.
  createPlant (plant: PlantRow): Promise<CreatePlantOutcome>
  // The plant stored under the id, or undefined when there is none. Rejects with
  // StoreUnavailableError when the backend cannot be reached for now.
  getPlant (id: bigint): Promise<PlantRow | undefined>
  // Resolves when the backend can serve requests; rejects with StoreUnavailableError otherwise.
  checkReady (): Promise<void>
  close (): Promise<void>
}
