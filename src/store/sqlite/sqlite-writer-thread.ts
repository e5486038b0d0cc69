import { parentPort, workerData } from 'node:worker_threads'
import type { PlantRecord } from '../plant-store.js'
import { SqliteError } from './sqlite-driver.js'
import { SqlitePlantWriter } from './sqlite-plant-writer.js'

// The thread that owns the store's SQLite connection: it commits batches of creates and answers
// readiness checks, one request at a time, while the main thread goes on serving HTTP.

export interface WriterThreadOptions {
  readonly filename: string
  readonly busyTimeoutMs: number
}

export type WriterRequest =
  | { readonly sequence: number, readonly kind: 'commit-creates', readonly plants: readonly PlantRecord[] }
  | { readonly sequence: number, readonly kind: 'check-ready' }
  | { readonly sequence: number, readonly kind: 'close' }

// Errors lose their class crossing threads, so a failure carries SQLite's code explicitly.
export type WriterReply =
  | { readonly sequence: number, readonly value: unknown }
  | { readonly sequence: number, readonly failure: { readonly message: string, readonly sqliteCode?: string } }

if (parentPort === null) throw new Error('sqlite-writer-thread.ts runs as a worker thread')
const port = parentPort
const { filename, busyTimeoutMs } = workerData as WriterThreadOptions
// Opened by the first request, and again by the next one if opening failed: a failure to open
// is that request's answer, with SQLite's code, rather than the end of the thread. The store
// applied the migrations before starting the thread.
let writer: SqlitePlantWriter | undefined

port.on('message', (request: WriterRequest) => {
  let reply: WriterReply
  try {
    reply = { sequence: request.sequence, value: serve(request) }
  } catch (error) {
    reply = {
      sequence: request.sequence,
      failure: error instanceof SqliteError
        ? { message: error.message, sqliteCode: error.code }
        : { message: error instanceof Error ? error.message : String(error) },
    }
  }
  port.postMessage(reply)
  // With the port closed, nothing keeps the thread alive: it ends.
  if (request.kind === 'close') port.close()
})

function serve (request: WriterRequest): unknown {
  if (request.kind === 'close') return writer?.close()
  writer ??= new SqlitePlantWriter(filename, busyTimeoutMs, { migrate: false })
  return request.kind === 'commit-creates' ? writer.commitCreates(request.plants) : writer.readMigrationVersion()
}
