import { unreachable } from '../errors/unreachable.js'
import { isSameJson } from '../int64/canonical-json.js'
import type { BatchObserver } from './batch-observer.js'
import { type ActiveWriterCount, type CommitBatch, GroupCommit, type GroupCommitOptions } from './group-commit.js'
import type { Outbox, PlantChange } from './outbox.js'
import type { CreatePlantOutcome, PlantRow, WriteContext } from './plant-store.js'
import { PlantConflictError, StoreUnavailableError } from './store-errors.js'

// A write of the plants: a create, or a delete. Both go through one queue, so that the writes of
// one id are committed in the order they arrived.
export type PlantWrite =
  | { readonly kind: 'create', readonly plant: PlantRow, readonly context?: WriteContext | undefined }
  | { readonly kind: 'delete', readonly id: bigint, readonly context?: WriteContext | undefined }

// What each kind of write may come to inside a committed batch. A create: stored, found already
// stored with the same document (a safe retry), or refused because the id holds another plant.
// A delete: the plant was there and is gone, or there was none.
interface ResultsOf {
  create: 'created' | 'replayed' | 'conflict'
  delete: 'deleted' | 'absent'
}
export type WriteResult = ResultsOf[PlantWrite['kind']]

export function compareWithStored (plant: PlantRow, storedDocument: string | undefined): ResultsOf['create'] {
  return storedDocument !== undefined && isSameJson(storedDocument, plant.document) ? 'replayed' : 'conflict'
}

export function idOf (write: PlantWrite): bigint {
  switch (write.kind) {
    case 'create': return write.plant.id
    case 'delete': return write.id
    default: return unreachable(write)
  }
}

// The change a write makes, when it makes one, that the webhooks may tell of.
function changeOf (write: PlantWrite): PlantChange {
  switch (write.kind) {
    case 'create': return 'plant-created'
    case 'delete': return 'plant-deleted'
    default: return unreachable(write)
  }
}

// While writes keep arriving, a batch waits up to three rounds of the event loop for more, and
// up to a millisecond for the writes of other connections that are writing (docs/benchmark.md
// has the measurements behind both).
const batchLimits = { maxBatchSize: 512, maxGatherRounds: 3, gatherForWritersMs: 1 }

// The writes of a store, committed in batches: what both backends share. `outbox` is the
// store's outbox at the time of asking (a store is given one after it opens): a committed batch
// that may have written messages tells it so.
export class BatchedWrites {
  private readonly groupCommit: GroupCommit<PlantWrite, WriteResult>
  private closing = false

  constructor (
    commitBatch: CommitBatch<PlantWrite, WriteResult>,
    isolateFailure: GroupCommitOptions['isolateFailure'],
    outbox: () => Outbox,
    observer: BatchObserver | undefined,
    activeWriters: ActiveWriterCount | undefined
  ) {
    const commitThenTell: CommitBatch<PlantWrite, WriteResult> = async (writes) => {
      const results = await commitBatch(writes)
      if (mayHaveWrittenMessages(outbox(), writes)) outbox().committed()
      return results
    }
    this.groupCommit = new GroupCommit(commitThenTell, { ...batchLimits, isolateFailure, observer, activeWriters })
  }

  // The write is queued before this returns (a delete too), so writes are committed in the order
  // of the calls.
  async create (plant: PlantRow, context?: WriteContext): Promise<CreatePlantOutcome> {
    const result = await this.submit({ kind: 'create', plant, context })
    switch (result) {
      case 'created': return { plant, created: true }
      case 'replayed': return { plant, created: false }
      case 'conflict': throw new PlantConflictError(plant.id)
      default: return unreachable(result)
    }
  }

  // True when a plant was deleted, false when none had the id.
  async delete (id: bigint, context?: WriteContext): Promise<boolean> {
    const result = await this.submit({ kind: 'delete', id, context })
    switch (result) {
      case 'deleted': return true
      case 'absent': return false
      default: return unreachable(result)
    }
  }

  // Takes no more writes, and resolves once those already taken are answered.
  async close (): Promise<void> {
    this.closing = true
    await this.groupCommit.idle()
  }

  // Each backend's commit answers a write with a result of its kind.
  private async submit<Kind extends keyof ResultsOf> (write: PlantWrite & { readonly kind: Kind }): Promise<ResultsOf[Kind]> {
    // A write that arrives while the store closes gets a 503: another instance, or this one
    // once restarted, can take it.
    if (this.closing) throw new StoreUnavailableError(1)
    return this.groupCommit.submit(write) as Promise<ResultsOf[Kind]>
  }
}

// Whether a committed batch may have written webhook messages: some write of it makes a change
// the outbox wants. Only then are the deliveries told to read the outbox again: with every
// endpoint subscribed to deletions only, a batch of creates wrote none, and reading after each
// one cost PostgreSQL two statements. Asked after the commit: should the subscriptions change
// while a batch runs on PostgreSQL, messages it wrote may go untold, and wait for the next poll
// (within 50 ms, src/webhooks/webhook-dispatcher.ts), as anything untold does.
function mayHaveWrittenMessages (outbox: Outbox, writes: readonly PlantWrite[]): boolean {
  return writes.some((write) => outbox.wants(changeOf(write)))
}
