import { isSameJson } from '../int64/canonical-json.js'

// The writes of the plants, what each may come to, and the change it makes: the one place a new
// kind of write is declared (PlantWrites below). Each backend commits every kind in a switch that
// ends in unreachable(), so a kind added here makes `npm run build` name each place that must
// learn it, and changeOfWrite its change.

// What a write carries besides the plant: the trace of the request that made it, which its
// webhooks link to.
export interface WriteContext {
  readonly traceparent?: string | undefined
}

// A condition on the plant stored under the write's id, asked inside the write's transaction
// (an If-Match header): given the stored document in its canonical form, whether the write may go
// on. No condition, or a plant stored under no such id, asks nothing.
export type StoredPlantCondition = (storedDocument: string) => boolean

// Every kind of write, in one map: what a write of the kind carries, what it may come to inside a
// committed batch, and the change it makes when it makes one, as openapi.yaml's webhooks name it
// in `x-sent-when` (what the webhooks may tell of). Every write goes through the store's one
// queue, so the writes of one id are committed in the order they arrived.
interface PlantWrites {
  // Stores the document under the id: stored, found already stored with the same document (a
  // safe retry), or refused because the id holds another plant.
  create: {
    write: { readonly id: bigint, readonly document: string }
    result: 'created' | 'replayed' | 'conflict'
    change: 'plant-created'
  }
  // Replaces the stored document: changed, found the same already (nothing written), there was
  // no plant, or its condition refused it.
  update: {
    write: { readonly id: bigint, readonly document: string, readonly condition?: StoredPlantCondition | undefined }
    result: 'updated' | 'unchanged' | 'absent' | 'condition-failed'
    change: 'plant-updated'
  }
  // Removes the plant: it was there and is gone, there was none, or its condition refused it.
  delete: {
    write: { readonly id: bigint, readonly condition?: StoredPlantCondition | undefined }
    result: 'deleted' | 'absent' | 'condition-failed'
    change: 'plant-deleted'
  }
}

export type PlantWriteKind = keyof PlantWrites

export type PlantWrite = {
  [Kind in PlantWriteKind]: { readonly kind: Kind, readonly context?: WriteContext | undefined } & PlantWrites[Kind]['write']
}[PlantWriteKind]

export type WriteResults = { [Kind in PlantWriteKind]: PlantWrites[Kind]['result'] }
export type WriteResult = WriteResults[PlantWriteKind]

export type PlantChange = PlantWrites[PlantWriteKind]['change']
export const changeOfWrite: { readonly [Kind in PlantWriteKind]: PlantWrites[Kind]['change'] } = {
  create: 'plant-created',
  update: 'plant-updated',
  delete: 'plant-deleted',
}
export const plantChanges: readonly PlantChange[] = Object.values(changeOfWrite)

// A create of an id already taken: a safe retry when the stored plant is the same, else a conflict.
export function compareWithStored (document: string, storedDocument: string | undefined): WriteResults['create'] {
  return storedDocument !== undefined && isSameJson(storedDocument, document) ? 'replayed' : 'conflict'
}
