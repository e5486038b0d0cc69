import { close, fsync, open } from 'node:fs'
import { promisify } from 'node:util'
import { StoreUnavailableError } from '../store-errors.js'

const openFile = promisify(open)
const syncFile = promisify(fsync)
const closeFile = promisify(close)

export type SyncFile = (fd: number) => Promise<void>

interface Waiter {
  readonly resolve: () => void
  readonly reject: (error: unknown) => void
}

// Makes a SQLite file's commits durable off the request thread. The connection commits with
// synchronous = NORMAL: a commit appends its pages to the write-ahead log and returns without
// waiting for the disk, already safe from a crash of the process (the kernel holds the writes).
// What must also survive a power loss before it is answered (a batch of creates, a token, an
// endpoint) then awaits `durable()`: an fsync of the log begun after the commit, run by Node's
// thread pool. With synchronous = FULL, SQLite ran that fsync inside the commit, on the event
// loop, which stood still while the disk was busy (docs/benchmark.md).
//
// Callers share fsyncs: one runs at a time, and every call made while it runs waits for the next
// one, begun as it ends, so a burst of commits costs two syncs, not one each. The log keeps its
// name and inode while a connection to the file is open (SQLite restarts and truncates it in
// place, and the last connection to close, never this one while it is open, deletes it).
//
// A message is handed to delivery once its commit is on disk (`committedDurable()`): usually
// this process's own batch, already being synced, so the read waits at most for that sync, not a
// new one (at one new fsync a read, a disk slowed to 300 ms an fsync held deliveries to a few
// hundred a second). A commit by another connection to the file (`commitsElsewhere`: SQLite's
// data_version) since the last sync began asks for a new one.
//
// A failed fsync fails every later call too: Linux may mark the pages it could not write as
// clean, so a later fsync would succeed without them, and SQLite, recovering after a power loss,
// would stop at the first missing frame and drop every commit after it. The store answers 503 and
// is not ready until the process is restarted and SQLite has recovered the file.
export class LogSync {
  #waiting: Waiter[] = []
  #running: Promise<void> | undefined
  #failure: StoreUnavailableError | undefined
  #closed = false
  // Calls of durable() so far (each made just after the commits it asks for), how many of them
  // the running sync covers and the last completed one covered, and the other connections'
  // commits each saw at its start.
  #asked = 0
  #runningCovers = 0
  #runningElsewhere: unknown
  #syncedCovers = 0
  #syncedElsewhere: unknown

  private constructor (private readonly fd: number, private readonly commitsElsewhere: () => unknown, private readonly syncFile: SyncFile) {
    this.#syncedElsewhere = commitsElsewhere()
  }

  static async open (walFilename: string, commitsElsewhere: () => unknown, sync: SyncFile = syncFile): Promise<LogSync> {
    return new LogSync(await openFile(walFilename, 'r+'), commitsElsewhere, sync)
  }

  // Resolves once everything the file's connections had committed when it was called is on disk.
  async durable (): Promise<void> {
    if (this.#failure !== undefined) throw this.#failure
    if (this.#closed) throw new StoreUnavailableError(1)
    this.#asked += 1
    const synced = new Promise<void>((resolve, reject) => { this.#waiting.push({ resolve, reject }) })
    if (this.#running === undefined) this.#startSync()
    return synced
  }

  // Resolves once everything committed and asked to be durable so far, here and by every other
  // connection to the file, is on disk: at once when a completed sync covers it, after the
  // running sync when that one does.
  async committedDurable (): Promise<void> {
    if (this.#failure !== undefined) throw this.#failure
    const elsewhere = this.commitsElsewhere()
    if (elsewhere === this.#syncedElsewhere && this.#syncedCovers === this.#asked) return
    const running = this.#running
    if (running !== undefined && elsewhere === this.#runningElsewhere && this.#runningCovers === this.#asked) {
      await running
      if (this.#failure !== undefined) throw this.#failure
      return
    }
    return this.durable()
  }

  // Throws once an fsync has failed: the store cannot say what it writes is on disk.
  checkHealthy (): void {
    if (this.#failure !== undefined) throw this.#failure
  }

  // Waits for the syncs already asked for, then closes the log's descriptor.
  async close (): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    while (this.#running !== undefined) await this.#running
    await closeFile(this.fd)
  }

  // The next sync begins in the same callback that ends the one before: no call can slip in
  // between and start one of its own, and close() sees every sync that runs.
  #startSync (): void {
    const waiters = this.#waiting
    this.#waiting = []
    const covers = this.#asked
    const elsewhere = this.commitsElsewhere()
    this.#runningCovers = covers
    this.#runningElsewhere = elsewhere
    this.#running = this.syncFile(this.fd).then(() => {
      this.#syncedCovers = covers
      this.#syncedElsewhere = elsewhere
      for (const waiter of waiters) waiter.resolve()
    }, (error: unknown) => {
      this.#failure ??= new StoreUnavailableError(1, { cause: error })
      for (const waiter of [...waiters, ...this.#waiting]) waiter.reject(this.#failure)
      this.#waiting = []
    }).then(() => {
      this.#running = undefined
      if (this.#waiting.length > 0) this.#startSync()
    })
  }
}
