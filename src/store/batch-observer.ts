// The backends, as the metrics and traces of their batches name them.
export type StoreBackend = 'sqlite' | 'postgres'

export interface BatchEnd {
  readonly durationSeconds: number
  // Why the batch's transaction failed; undefined when it committed.
  readonly error?: unknown
}

// What the metrics and the traces learn of a store's batched writes (src/store/group-commit.ts),
// told at the few moments that matter rather than measured inside the store.
export interface BatchObserver {
  // Called as each write is queued, in its caller's asynchronous context (so inside the request
  // that made it): what it returns travels with the write into the batch that commits it.
  readonly writeQueued?: () => unknown
  // Called as a batch's transaction begins, with what writeQueued returned for each of its writes
  // (undefined where there is no writeQueued); the function it returns is called once the
  // transaction has ended.
  readonly batchStarted: (writes: readonly unknown[]) => (end: BatchEnd) => void
}

// Both observers, each as if alone: each write carries what each one's writeQueued returned.
export function bothObservers (first: BatchObserver, second: BatchObserver): BatchObserver {
  return {
    writeQueued: () => [first.writeQueued?.(), second.writeQueued?.()],
    batchStarted: (writes) => {
      const pairs = writes as ReadonlyArray<readonly [unknown, unknown]>
      const firstEnded = first.batchStarted(pairs.map(([write]) => write))
      const secondEnded = second.batchStarted(pairs.map(([, write]) => write))
      return (end) => {
        firstEnded(end)
        secondEnded(end)
      }
    },
  }
}
