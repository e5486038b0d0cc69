import { Worker } from 'node:worker_threads'
import { databaseModulePath } from './sqlite-driver.js'

// The thread that checkpoints a SQLite file's write-ahead log, off the request thread. Left to
// itself, SQLite checkpoints inside the commit that takes the log past 1,000 pages: the commit's
// request, and every request queued behind it on the event loop, waits while the pages are
// copied into the database file and that file is synced. With random ids every create dirties
// a page of its own, and the copy took 23% of the service's CPU (docs/benchmark.md).
//
// The thread has a connection of its own and copies the log's pages into the database file every
// `everyMs`, so that the request thread's commits only append to the log. PASSIVE waits for no
// reader and no writer: pages still in use stay for the next round. A failure (the file gone,
// the disk full) is left to the next round, and to the safety net on the request thread's
// connection (its own wal_autocheckpoint).
//
// Its few lines are plain CommonJS run without the process's loaders (execArgv: []): the same
// code in the compiled service and in the tests, which run the TypeScript sources and would
// otherwise compile a TypeScript toolchain into every thread (a second per store opened).
const checkpointThreadSource = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.databaseModulePath)
const database = new Database(workerData.filename, { timeout: 0 })
database.pragma('wal_autocheckpoint = 0')
const checkpoint = database.prepare('PRAGMA wal_checkpoint(PASSIVE)')
const timer = setInterval(() => {
  try {
    checkpoint.run()
  } catch {
    // Tried again in the next round.
  }
}, workerData.everyMs)
parentPort.once('message', () => {
  clearInterval(timer)
  database.close()
  parentPort.close()
})
`

export class WalCheckpointer {
  private constructor (private readonly worker: Worker, private readonly exited: Promise<void>) {}

  static start (filename: string, everyMs: number): WalCheckpointer {
    const worker = new Worker(checkpointThreadSource, {
      eval: true,
      execArgv: [],
      workerData: { databaseModulePath, filename, everyMs }
    })
    // The thread keeps no process alive, and its failure is not the process's: the request
    // thread's own checkpoints (the safety net) go on.
    worker.unref()
    worker.on('error', () => undefined)
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
    return new WalCheckpointer(worker, exited)
  }

  // Asks the thread to close its connection, and waits until it has (or has failed).
  async stop (): Promise<void> {
    // Held by the wait: an unreferenced thread would let the process end before it has closed.
    this.worker.ref()
    this.worker.postMessage('stop')
    await this.exited
  }
}
