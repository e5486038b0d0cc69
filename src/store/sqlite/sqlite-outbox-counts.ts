import type { Statement } from 'better-sqlite3'
import { countPendingMessages, type EndpointRecord, endpointSummaryOf, selectEndpointsWithCounts } from '../webhook-records.js'
import type { WebhookEndpointSummary } from '../webhook-store.js'
import type { Database } from './sqlite-driver.js'

// A statement run on the request thread's connection, its errors translated for the store.
export type RunStatement = <T>(statement: () => T) => T

// Where the reads that scan the outbox run (src/store/sqlite/background-connection.ts): the rows,
// or undefined when they could not be read there.
export interface BackgroundReads {
  read: <Row>(sql: string) => Promise<Row[] | undefined>
}

// SQLite keeps an endpoint's events as JSON text.
type SqliteEndpointRecord = Omit<EndpointRecord, 'events'> & { events: string | null }

const ignore = (): void => undefined

// A read that callers ask for at once: one runs at a time, and those who ask while it runs share
// the next, begun once it ends. Each caller gets a read begun after it asked (so what it
// committed before is counted), and however often the read is asked for, at most two wait on the
// thread, where they hold up the checkpoints.
class SharedRead<T> {
  private running: Promise<T> | undefined
  private next: Promise<T> | undefined

  constructor (private readonly read: () => Promise<T>) {}

  async ask (): Promise<T> {
    if (this.running === undefined) return this.start()
    this.next ??= this.running.then(ignore, ignore).then(async () => {
      this.next = undefined
      return this.start()
    })
    return this.next
  }

  private async start (): Promise<T> {
    const read = this.read()
    this.running = read
    const ended = (): void => { if (this.running === read) this.running = undefined }
    read.then(ended, ended)
    return read
  }
}

// The endpoints with what each is owed, and what all of them are owed: reads that step through
// every waiting message, about 100 ms for a million, which each scrape of /metrics and each
// listing of the endpoints spent on the request thread while no request was answered. They run
// on the background connection's thread, and on the request thread should that one fail or
// have stopped.
export class SqliteOutboxCounts {
  private readonly selectEndpoints: Statement<[], SqliteEndpointRecord>
  private readonly countPending: Statement<[], { count: bigint }>
  private readonly endpointsRead = new SharedRead(async () => this.read(this.selectEndpoints))
  private readonly countRead = new SharedRead(async () => this.read(this.countPending))

  constructor (database: Database, private readonly run: RunStatement, private readonly background: BackgroundReads) {
    this.selectEndpoints = database.prepare(selectEndpointsWithCounts)
    this.countPending = database.prepare(countPendingMessages)
  }

  async endpoints (): Promise<WebhookEndpointSummary[]> {
    return (await this.endpointsRead.ask()).map((record) =>
      endpointSummaryOf({ ...record, events: record.events === null ? null : JSON.parse(record.events) as string[] }))
  }

  async pendingMessages (): Promise<number> {
    return Number((await this.countRead.ask())[0]?.count ?? 0)
  }

  private async read<Row> (statement: Statement<[], Row>): Promise<Row[]> {
    return await this.background.read<Row>(statement.source) ?? this.run(() => statement.all())
  }
}
