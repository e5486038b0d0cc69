// Reads of one plant each, gathered from the requests of one turn of the event loop and read
// together once it has handled them all: on SQLite one read transaction for the batch (its WAL
// read lock taken once, its pages and structures warm from one lookup to the next), on
// PostgreSQL one query. A read waits at most for the end of the turn it arrived in; under load,
// measured on ten million plants, a getPlant cost about a third less CPU (docs/benchmark.md).
export type ReadBatch<Key, Value> = (keys: readonly Key[]) => Promise<readonly Value[]> | readonly Value[]

interface Waiting<Key, Value> {
  readonly key: Key
  readonly resolve: (value: Value) => void
  readonly reject: (error: unknown) => void
}

// At most this many in one read; more wait for the next turn's.
const maxBatchSize = 512

export class BatchedReads<Key, Value> {
  #waiting: Array<Waiting<Key, Value>> = []

  constructor (private readonly readBatch: ReadBatch<Key, Value>) {}

  read (key: Key): Promise<Value> {
    return new Promise<Value>((resolve, reject) => {
      this.#waiting.push({ key, resolve, reject })
      if (this.#waiting.length === 1) setImmediate(() => { void this.#readWaiting() })
    })
  }

  // Never rejects: every waiting caller is answered, with its value or the batch's failure.
  async #readWaiting (): Promise<void> {
    const batch = this.#waiting.splice(0, maxBatchSize)
    if (this.#waiting.length > 0) setImmediate(() => { void this.#readWaiting() })
    try {
      const values = await this.readBatch(batch.map(({ key }) => key))
      if (values.length !== batch.length) throw new Error(`a batch of ${batch.length} reads gave ${values.length} values`)
      batch.forEach(({ resolve }, index) => resolve(values[index]!))
    } catch (error) {
      for (const { reject } of batch) reject(error)
    }
  }
}
