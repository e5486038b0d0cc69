import type { ApiTokenStore } from './api-token-store.js'
import type { MigrationReport } from './migration-runner.js'
import type { PlantRow } from './plant-row.js'
import type { Outbox } from './outbox.js'
import type { PlantWrite, WriteResults } from './plant-writes.js'
import type { WebhookStore } from './webhook-store.js'

export { type PlantRow, plantWithId } from './plant-row.js'
export type { PlantWrite, WriteContext, WriteResults } from './plant-writes.js'

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
  // Commits the write durably (one transaction with the webhooks' messages of its change, see
  // useOutbox), in the order of the calls, and answers what it came to (src/store/plant-writes.ts):
  // a create is one insert-or-compare, a delete or any write with a condition reads the stored
  // plant in the same transaction. Rejects with StoreUnavailableError when the backend cannot be
  // reached for now. The write is in the store's queue when the call returns, before anything is
  // awaited: pipelined requests rely on it (src/http/request-turns.ts).
  write<Write extends PlantWrite> (write: Write): Promise<WriteResults[Write['kind']]>
  // The plant stored under the id, or undefined when there is none. Rejects with
  // StoreUnavailableError when the backend cannot be reached for now.
  getPlant (id: bigint): Promise<PlantRow | undefined>
  // Up to `limit` plants in ascending order of id, those after `after` when it is given (keyset,
  // so a page costs the same wherever it starts), and whether more follow.
  listPlants (after: bigint | undefined, limit: number): Promise<PlantPage>
  // Where the messages of the changes committed from now on come from (none until called).
  useOutbox (outbox: Outbox): void
  // Resolves when the backend can serve requests; rejects with StoreUnavailableError otherwise.
  checkReady (): Promise<void>
  close (): Promise<void>
}
