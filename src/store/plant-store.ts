// A plant as the store keeps it. The id is a bigint because ids are int64: a JavaScript number
// would merge ids that differ only above 2^53.
export interface PlantRecord {
  readonly id: bigint
  readonly name: string
  readonly tag?: string
}

export interface CreatePlantOutcome {
  readonly plant: PlantRecord
  // false when an identical plant was already stored: a safe retry that stored nothing new.
  readonly created: boolean
}

// Every backend implements this and passes the shared contract suite in test/store/.
export interface PlantStore {
  // Stores the plant atomically, in one insert-or-compare. Rejects with PlantConflictError when
  // the id is taken by a plant with another name or tag, and with StoreUnavailableError when
  // the backend cannot be reached for now.
  createPlant (plant: PlantRecord): Promise<CreatePlantOutcome>
  // Resolves when the backend can serve requests; rejects with StoreUnavailableError otherwise.
  checkReady (): Promise<void>
  close (): Promise<void>
}
