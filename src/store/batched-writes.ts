import type { BatchObserver } from './batch-observer.js'
import { type ActiveWriterCount, type CommitBatch, GroupCommit, type GroupCommitOptions } from './group-commit.js'
import type { Outbox } from './outbox.js'
import { changeOfWrite, type PlantWrite, type WriteResult, type WriteResults } from './plant-writes.js'
import { StoreUnavailableError } from './store-errors.js'

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

  // The write is queued before this returns, so writes are committed in the order of the calls.
  // Each backend's commit answers a write with a result of its kind. A write that arrives while
  // the store closes gets a 503: another instance, or this one once restarted, can take it.
  async write<Write extends PlantWrite> (write: Write): Promise<WriteResults[Write['kind']]> {
    if (this.closing) throw new StoreUnavailableError(1)
    return this.groupCommit.submit(write) as Promise<WriteResults[Write['kind']]>
  }

  // Takes no more writes, and resolves once those already taken are answered.
  async close (): Promise<void> {
    this.closing = true
    await this.groupCommit.idle()
  }
}

// Whether a committed batch may have written webhook messages: some write of it makes a change
// the outbox wants. Only then are the deliveries told to read the outbox again: with every
// endpoint subscribed to deletions only, a batch of creates wrote none, and reading after each
// one cost PostgreSQL two statements. Asked after the commit: should the subscriptions change
// while a batch runs on PostgreSQL, messages it wrote may go untold, and wait for the next poll
// (within 50 ms, src/webhooks/webhook-dispatcher.ts), as anything untold does.
function mayHaveWrittenMessages (outbox: Outbox, writes: readonly PlantWrite[]): boolean {
  return writes.some((write) => outbox.wants(changeOfWrite[write.kind]))
}
