import { setImmediate as nextRoundOfTheEventLoop } from 'node:timers/promises'
import { performance } from 'node:perf_hooks'
import type { BatchObserver } from './batch-observer.js'

// Commits many callers' writes together: one transaction, and one flush to disk, per batch
// instead of per request.
//
// A batch starts once the event loop has finished its current round of I/O, so every request
// read in that round joins it; while creates are still arriving it waits a round more (up to
// maxGatherRounds), as one flush for more writes costs less than two. One batch commits at a
// time (two or more at once were measured no faster, docs/benchmark.md): new arrivals wait and
// form the next one, and batches are taken in arrival order, at most maxBatchSize at a time, so
// under any load a caller waits behind those who came before it and no one else.
//
// When more writers (the connections the requests came on, still open: activeWriters) have
// written in the last moments than writes are waiting, a batch waits a little longer for
// theirs (up to gatherForWritersMs from when it was scheduled), as PostgreSQL's commit_delay
// waits for its siblings: at a steady, moderate rate the writes arrive spread out, each event
// loop round holds one or two, and each batch's flush to disk cost nearly as much as a batch of
// five (docs/benchmark.md). A lone connection's writes are never kept waiting, nor a batch
// with as many writes as there are active writers.
//
// Each caller's promise settles only after its batch has committed (or failed): with its own
// outcome, or with the batch's error. A batch whose transaction failed wrote nothing, as its
// commit function must run it in one transaction; one that failed after committing (reading back
// what its callers are owed) stays written, and a caller who retries gets a replay. When
// isolateFailure says a failure may be one write's own fault rather than the store's, each write
// of the batch is committed again on its own, so a bad write fails alone and its neighbours get
// their true outcomes; it must say so only of a failure that left the batch unwritten, never of
// one raised after the commit.
export type CommitBatch<Item, Outcome> = (items: readonly Item[]) => Promise<readonly Outcome[]>

// How many writers are active now, counting no further than `limit`: the service counts the
// connections its write requests came on lately; the store needs no more than the number.
export type ActiveWriterCount = (limit: number) => number

export interface GroupCommitOptions {
  readonly maxBatchSize: number
  // Rounds of the event loop a batch may wait for more writes while they keep arriving.
  readonly maxGatherRounds: number
  // How long a batch may wait, from when it was scheduled, for the writes of other active
  // writers (above); 0, or no activeWriters, waits for none.
  readonly gatherForWritersMs?: number
  readonly activeWriters?: ActiveWriterCount | undefined
  readonly isolateFailure: (error: unknown) => boolean
  // Told of each transaction: the batch's, or each write's alone when a batch is retried so.
  readonly observer?: BatchObserver | undefined
}

interface Waiting<Item, Outcome> {
  readonly item: Item
  // What the observer's writeQueued returned for this write.
  readonly observed: unknown
  readonly resolve: (outcome: Outcome) => void
  readonly reject: (error: unknown) => void
}

export class GroupCommit<Item, Outcome> {
  private readonly queue: Array<Waiting<Item, Outcome>> = []
  private readonly gatherForWritersMs: number
  // A batch waiting for other writers' writes: how many writes it waits for (the active writers
  // when it began to: counted once, not on each write), and what ends the wait.
  private writersWait: { readonly awaited: number, readonly timer: NodeJS.Timeout, readonly start: () => void } | undefined
  private committing = false
  private batchScheduled = false
  private readonly idleWaiters: Array<() => void> = []

  constructor (
    private readonly commitBatch: CommitBatch<Item, Outcome>,
    private readonly options: GroupCommitOptions
  ) {
    if (options.maxBatchSize < 1 || options.maxGatherRounds < 1) {
      throw new RangeError('batch size and gather rounds must be at least 1')
    }
    this.gatherForWritersMs = options.gatherForWritersMs ?? 0
  }

  // The write joins the queue at once, inside this call: a caller that submits writes in order
  // has them committed in that order (the order of pipelined requests rests on it,
  // src/http/request-turns.ts).
  submit (item: Item): Promise<Outcome> {
    const observed = observeSafely(() => this.options.observer?.writeQueued?.())
    return new Promise<Outcome>((resolve, reject) => {
      this.queue.push({ item, observed, resolve, reject })
      this.scheduleBatch()
      // As many writes wait as there are active writers: the batch starts (outside this caller's
      // call, as it would have from its timer).
      const wait = this.writersWait
      if (wait !== undefined && this.holdsEveryWrite(wait.awaited)) queueMicrotask(wait.start)
    })
  }

  // Resolves once nothing is queued or committing.
  async idle (): Promise<void> {
    if (this.queue.length === 0 && !this.committing) return
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve))
  }

  private scheduleBatch (): void {
    if (this.batchScheduled || this.queue.length === 0 || this.committing) return
    this.batchScheduled = true
    const scheduledAt = performance.now()
    let roundsLeft = this.options.maxGatherRounds
    let waitingBefore = this.queue.length
    let started = false
    const start = (): void => {
      if (started) return
      started = true
      if (this.writersWait !== undefined) clearTimeout(this.writersWait.timer)
      this.writersWait = undefined
      this.batchScheduled = false
      void this.runBatch()
    }
    const startOrGather = (): void => {
      const stillArriving = this.queue.length > waitingBefore
      if (--roundsLeft > 0 && stillArriving && this.queue.length < this.options.maxBatchSize) {
        waitingBefore = this.queue.length
        setImmediate(startOrGather)
        return
      }
      // Other active writers' writes to wait for, until gatherForWritersMs after the scheduling.
      const awaited = this.awaitedWrites()
      const waitLeftMs = this.holdsEveryWrite(awaited) ? 0 : this.gatherForWritersMs - (performance.now() - scheduledAt)
      if (waitLeftMs > 0) this.writersWait = { awaited, timer: setTimeout(start, waitLeftMs), start }
      else start()
    }
    setImmediate(startOrGather)
  }

  // The writes queued that leave no active writer to wait for: one per active writer, counted no
  // further than a full batch (none when batches wait for no writer).
  private awaitedWrites (): number {
    const { activeWriters, maxBatchSize } = this.options
    if (activeWriters === undefined || this.gatherForWritersMs <= 0) return 0
    return activeWriters(maxBatchSize)
  }

  private holdsEveryWrite (awaited: number): boolean {
    return this.queue.length >= awaited
  }

  // Never rejects: whatever goes wrong, every caller of the batch is answered.
  private async runBatch (): Promise<void> {
    if (this.queue.length === 0 || this.committing) return
    const batch = this.queue.splice(0, this.options.maxBatchSize)
    this.committing = true
    try {
      await this.commit(batch)
    } catch (error) {
      // Settling a promise twice does nothing, so only callers still waiting get this.
      for (const waiting of batch) waiting.reject(error)
    } finally {
      // More may be waiting than one batch takes, or have arrived while it committed.
      this.committing = false
      this.scheduleBatch()
      if (this.queue.length === 0) {
        for (const resolve of this.idleWaiters.splice(0)) resolve()
      }
    }
  }

  private async commit (batch: ReadonlyArray<Waiting<Item, Outcome>>): Promise<void> {
    let outcomes: readonly Outcome[]
    try {
      outcomes = await this.commitObserved(batch)
    } catch (error) {
      if (batch.length > 1 && this.options.isolateFailure(error)) await this.commitOneByOne(batch)
      else for (const waiting of batch) waiting.reject(error)
      return
    }
    // The batch committed, so it must not be retried: a wrong count fails every caller.
    if (outcomes.length !== batch.length) {
      throw new Error(`a batch of ${batch.length} writes committed with ${outcomes.length} outcomes`)
    }
    batch.forEach((waiting, index) => waiting.resolve(outcomes[index]!))
  }

  private async commitObserved (batch: ReadonlyArray<Waiting<Item, Outcome>>): Promise<readonly Outcome[]> {
    const items = batch.map(({ item }) => item)
    const observer = this.options.observer
    if (observer === undefined) return this.commitBatch(items)
    const ended = observeSafely(() => observer.batchStarted(batch.map(({ observed }) => observed)))
    const started = performance.now()
    let outcomes: readonly Outcome[]
    try {
      outcomes = await this.commitBatch(items)
    } catch (error) {
      observeSafely(() => ended?.({ durationSeconds: (performance.now() - started) / 1000, error }))
      throw error
    }
    observeSafely(() => ended?.({ durationSeconds: (performance.now() - started) / 1000 }))
    return outcomes
  }

  // Each write alone, in order, letting the event loop run between them. A failure that is the
  // store's (not the write's) ends the retries: the writes left get it too.
  private async commitOneByOne (batch: ReadonlyArray<Waiting<Item, Outcome>>): Promise<void> {
    for (const [index, waiting] of batch.entries()) {
      const { resolve, reject } = waiting
      await nextRoundOfTheEventLoop()
      try {
        const [outcome] = await this.commitObserved([waiting])
        if (outcome === undefined) throw new Error('a write committed with no outcome')
        resolve(outcome)
      } catch (error) {
        reject(error)
        if (!this.options.isolateFailure(error)) {
          for (const waiting of batch.slice(index + 1)) waiting.reject(error)
          return
        }
      }
    }
  }
}

// An observer that throws must not change what a batch came to: a committed batch failed by its
// metrics would be committed again, one write at a time.
function observeSafely<T> (observe: () => T): T | undefined {
  try {
    return observe()
  } catch {
    return undefined
  }
}
