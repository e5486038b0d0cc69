import { Worker } from 'node:worker_threads'
import { databaseModulePath } from './sqlite-driver.js'

// A second connection to a SQLite file, on a thread of its own, for the work that would
// otherwise stall the request thread: better-sqlite3 runs every statement synchronously, and
// while one runs no request is answered.
//
// - It checkpoints the write-ahead log. Left to itself, SQLite checkpoints inside the commit that
//   takes the log past 1,000 pages: the commit's request, and every request queued behind it on
//   the event loop, waits while the pages are copied into the database file and that file is
//   synced. With random ids every create dirties a page of its own, and the copy took 23% of the
//   service's CPU (docs/benchmark.md). Here the log's pages are copied every `checkpointEveryMs`,
//   so that the request thread's commits only append to the log. PASSIVE waits for no reader and
//   no writer: pages still in use stay for the next round. A failure (the file gone, the disk
//   full) is left to the next round, and to the safety net on the request thread's connection
//   (its own wal_autocheckpoint).
// - It runs the reads that scan the outbox (`read`): a count of a million waiting messages takes
//   about 100 ms, which each scrape of /metrics and each listing of the endpoints spent on the
//   request thread. In WAL mode a read here sees every commit made before it was asked for. It
//   holds up the checkpoints while it runs; its callers keep at most two of each waiting
//   (src/store/sqlite/sqlite-outbox-counts.ts).
//
// Its few lines are plain CommonJS run without the process's loaders (execArgv: []): the same
// code in the compiled service and in the tests, which run the TypeScript sources and would
// otherwise compile a TypeScript toolchain into every thread (a second per store opened).
const threadSource = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.databaseModulePath)
const database = new Database(workerData.filename, { timeout: 0 })
database.pragma('wal_autocheckpoint = 0')
// Reads only: a checkpoint changes no data, and is still allowed.
database.pragma('query_only = 1')
database.defaultSafeIntegers(true)
const checkpoint = database.prepare('PRAGMA wal_checkpoint(PASSIVE)')
const timer = setInterval(() => {
  try {
    checkpoint.run()
  } catch {
    // Tried again in the next round.
  }
}, workerData.checkpointEveryMs)
const prepared = new Map()
parentPort.on('message', (message) => {
  if (message.stop) {
    clearInterval(timer)
    database.close()
    parentPort.close()
    return
  }
  try {
    let statement = prepared.get(message.sql)
    if (statement === undefined) {
      statement = database.prepare(message.sql)
      prepared.set(message.sql, statement)
    }
    parentPort.postMessage({ id: message.id, rows: statement.all() })
  } catch {
    parentPort.postMessage({ id: message.id, rows: null })
  }
})
`

interface ReadAnswer {
  readonly id: number
  readonly rows: unknown[] | null
}

export class BackgroundConnection {
  private readonly waiting = new Map<number, (rows: unknown[] | undefined) => void>()
  private lastReadId = 0
  // False once stop() is asked for, or the thread has ended.
  private running = true

  private constructor (private readonly worker: Worker, private readonly exited: Promise<void>) {
    worker.on('message', ({ id, rows }: ReadAnswer) => { this.answer(id, rows ?? undefined) })
  }

  // `onFailure` hears of the thread's failure (its file could not be opened, a statement outside a
  // read threw), once: from then on the safety net checkpoints and reads run on the request thread.
  static start (filename: string, checkpointEveryMs: number, onFailure: (error: unknown) => void = () => undefined): BackgroundConnection {
    const worker = new Worker(threadSource, {
      eval: true,
      execArgv: [],
      workerData: { databaseModulePath, filename, checkpointEveryMs },
    })
    // The thread keeps no process alive, and its failure is not the process's: the request
    // thread's own checkpoints (the safety net) go on, and its reads run on the request thread.
    worker.unref()
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
    const connection = new BackgroundConnection(worker, exited)
    // Heard always (a second 'error' without a listener would be thrown in the process), told
    // once, and not of a failure while the store closes.
    let told = false
    worker.on('error', (error) => {
      if (told || !connection.running) return
      told = true
      onFailure(error)
    })
    void exited.then(() => { connection.stopped() })
    return connection
  }

  // The rows of a read-only statement (integers as bigint, as on the request thread), or
  // undefined when the thread could not run it (it failed, is stopping or has stopped): the caller
  // then runs it itself. A read waits for the one before it, and for a checkpoint under way.
  async read<Row> (sql: string): Promise<Row[] | undefined> {
    if (!this.running) return undefined
    const id = ++this.lastReadId
    // Held while a read waits: an unreferenced thread's answer would not keep the process up.
    if (this.waiting.size === 0) this.worker.ref()
    return new Promise((resolve) => {
      this.waiting.set(id, resolve as (rows: unknown[] | undefined) => void)
      this.worker.postMessage({ id, sql })
    })
  }

  // Asks the thread to close its connection, and waits until it has (or has failed).
  async stop (): Promise<void> {
    this.running = false
    // Held by the wait (reads answered meanwhile leave it held): an unreferenced thread would let
    // the process end before it has closed.
    this.worker.ref()
    this.worker.postMessage({ stop: true })
    await this.exited
  }

  private answer (id: number, rows: unknown[] | undefined): void {
    const resolve = this.waiting.get(id)
    if (resolve === undefined) return
    this.waiting.delete(id)
    if (this.waiting.size === 0 && this.running) this.worker.unref()
    resolve(rows)
  }

  // Reads still waiting when the thread ended (it failed) are run by their callers.
  private stopped (): void {
    this.running = false
    for (const id of [...this.waiting.keys()]) this.answer(id, undefined)
  }
}
