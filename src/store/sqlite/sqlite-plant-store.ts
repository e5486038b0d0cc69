import { Worker } from 'node:worker_threads'
import { type CreateResult, toCreatePlantOutcome } from '../create-outcome.js'
import { GroupCommit } from '../group-commit.js'
import type { CreatePlantOutcome, PlantRecord, PlantStore } from '../plant-store.js'
import { StoreUnavailableError } from '../store-errors.js'
import { SqlitePlantWriter } from './sqlite-plant-writer.js'
import type { WriterReply, WriterRequest, WriterThreadOptions } from './sqlite-writer-thread.js'

export interface SqlitePlantStoreOptions {
  readonly filename: string
  // How long a write waits for another connection's lock before the request gets a 503.
  readonly busyTimeoutMs?: number
  // The most creates committed in one transaction.
  readonly maxBatchSize?: number
}

// Failures that say "not now" rather than "never": the request may be retried.
const transientErrorCodes = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|PROTOCOL)/

// Compiled, the thread is the .js beside this file; run from source (by the tests' TypeScript
// loader, which worker threads inherit), the .ts.
const writerThreadFile = new URL(
  import.meta.url.endsWith('.ts') ? './sqlite-writer-thread.ts' : './sqlite-writer-thread.js', import.meta.url)

// Creates are committed in batches (group-commit.ts) by a thread that owns the connection, so
// the event loop goes on reading and answering requests while a batch waits for its fsync.
type Request = WriterRequest extends infer Each ? Each extends WriterRequest ? Omit<Each, 'sequence'> : never : never

export class SqlitePlantStore implements PlantStore {
  private readonly threadOptions: WriterThreadOptions
  private writerThread: Worker | undefined
  private readonly creates: GroupCommit<PlantRecord, CreateResult>
  private readonly pending = new Map<number, { resolve: (value: unknown) => void, reject: (error: unknown) => void }>()
  private lastSequence = 0
  private closed: Promise<void> | undefined

  constructor ({ filename, busyTimeoutMs = 250, maxBatchSize = 512 }: SqlitePlantStoreOptions) {
    // Opened and migrated here first, so that a file that cannot be used stops start-up at once.
    new SqlitePlantWriter(filename, busyTimeoutMs, { migrate: true }).close()
    this.threadOptions = { filename, busyTimeoutMs }
    this.writerThread = this.startWriterThread()
    this.creates = new GroupCommit(async (plants) => this.ask({ kind: 'commit-creates', plants }) as Promise<CreateResult[]>, {
      maxBatchSize,
      maxBatchesInFlight: 1,
      // "Busy" or "disk full" is the store's state, the same for every write in the batch.
      isolateFailure: (error) => !(error instanceof StoreUnavailableError),
    })
  }

  async createPlant (plant: PlantRecord): Promise<CreatePlantOutcome> {
    return toCreatePlantOutcome(plant, await this.creates.submit(plant))
  }

  async checkReady (): Promise<void> {
    await this.ask({ kind: 'check-ready' })
  }

  async close (): Promise<void> {
    this.closed ??= this.creates.idle().then(async () => {
      const thread = this.writerThread
      if (thread === undefined) return
      const exited = new Promise((resolve) => thread.once('exit', resolve))
      // Whatever the answer, the thread ends after it.
      await this.ask({ kind: 'close' }).catch(() => undefined)
      // Held alive until it has ended, so that closing is really over when this resolves.
      thread.ref()
      await exited
    })
    return this.closed
  }

  private startWriterThread (): Worker {
    const thread = new Worker(writerThreadFile, { workerData: this.threadOptions })
    thread.unref()
    thread.on('message', (reply: WriterReply) => this.settle(reply))
    // The thread stopped (it ran out of memory, say): what it was doing gets an error, and the
    // next request starts a new thread.
    thread.on('error', (error) => this.failPending(new StoreUnavailableError(1, { cause: error })))
    thread.on('exit', () => {
      if (this.writerThread === thread) this.writerThread = undefined
      this.failPending(new StoreUnavailableError(1))
    })
    return thread
  }

  private async ask (request: Request): Promise<unknown> {
    if (this.closed !== undefined && request.kind !== 'close') throw new Error('the SQLite store is not open')
    const sequence = ++this.lastSequence
    const answer = new Promise((resolve, reject) => this.pending.set(sequence, { resolve, reject }))
    this.writerThread ??= this.startWriterThread()
    // The thread keeps the process alive only while it has work.
    this.writerThread.ref()
    this.writerThread.postMessage({ ...request, sequence })
    return answer
  }

  private settle (reply: WriterReply): void {
    const waiting = this.pending.get(reply.sequence)
    if (waiting === undefined) return
    this.pending.delete(reply.sequence)
    if (this.pending.size === 0) this.writerThread?.unref()
    if (!('failure' in reply)) {
      waiting.resolve(reply.value)
      return
    }
    const { message, sqliteCode } = reply.failure
    const error = Object.assign(new Error(message), sqliteCode === undefined ? {} : { code: sqliteCode })
    waiting.reject(sqliteCode !== undefined && transientErrorCodes.test(sqliteCode)
      ? new StoreUnavailableError(1, { cause: error })
      : error)
  }

  private failPending (error: unknown): void {
    for (const { reject } of this.pending.values()) reject(error)
    this.pending.clear()
  }
}
