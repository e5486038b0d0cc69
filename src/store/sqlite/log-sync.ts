import { close, fsync, open } from 'node:fs'
import { promisify } from 'node:util'
import { StoreUnavailableError } from '../store-errors.js'

const openFile = promisify(open)
const syncFile = promisify(fsync)
const closeFile = promisify(close)

export type SyncFile = (fd: number) => Promise<void>

// Makes a SQLite file's commits durable off the request thread. The connection commits with
// synchronous = NORMAL: a commit appends its pages to the write-ahead log and returns without
// waiting for the disk, already safe from a crash of the process (the kernel holds the writes).
// What must also survive a power loss before it is answered (a batch of creates, a token, an
// endpoint) then awaits `durable()`: an fsync of the log begun after the commit, run by Node's
// thread pool. With synchronous = FULL, SQLite ran that fsync inside the commit, on the event
// loop, which stood still while the disk was busy: at a steady 2,000 creates a second the creates'
// p99 was 80 ms, 13 ms without (docs/benchmark.md).
//
// Callers share fsyncs: one runs at a time, and every call made while it runs waits for the next
// one, begun once it ends, so a burst of commits costs two syncs, not one each. The log's name
// and inode stay as long as a connection to the file is open (SQLite restarts it in place).
export class LogSync {
  #running: Promise<void> | undefined
  #queued: Promise<void> | undefined
  #closed = false

  private constructor (private readonly fd: number, private readonly syncFile: SyncFile) {}

  static async open (walFilename: string, sync: SyncFile = syncFile): Promise<LogSync> {
    return new LogSync(await openFile(walFilename, 'r'), sync)
  }

  // Resolves once everything the file's connections had committed when it was called is on disk.
  async durable (): Promise<void> {
    if (this.#closed) throw new StoreUnavailableError(1)
    if (this.#running === undefined) return this.#start()
    this.#queued ??= this.#running.catch(() => undefined).then(() => {
      this.#queued = undefined
      return this.#start()
    })
    return this.#queued
  }

  // Once every write that awaits it has been answered.
  async close (): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await Promise.allSettled([this.#running, this.#queued])
    await closeFile(this.fd)
  }

  #start (): Promise<void> {
    const running: Promise<void> = this.syncFile(this.fd).then(undefined, (error: unknown) => {
      // The commit stands, but cannot be said to be on disk: its writes are answered 503, and a
      // retry with the same id is a replay.
      throw new StoreUnavailableError(1, { cause: error })
    }).finally(() => {
      if (this.#running === running) this.#running = undefined
    })
    this.#running = running
    return running
  }
}
