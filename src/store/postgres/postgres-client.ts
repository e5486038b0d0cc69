import pg from 'pg'

// The errors of connections that could not be opened.
const failuresToConnect = new WeakSet<object>()

// Whether the error is that of a connection that could not be opened, whatever the server said:
// the client's own, or the pool's that wraps it (its connection timeout's, whose cause it is).
export function failedToConnect (error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  return failuresToConnect.has(error) || (error instanceof Error && failedToConnect(error.cause))
}

// The store's client (its pool's and its migrations'): a connection that cannot be opened marks
// its error, so that a refusal from the server as the connection opens (the database dropped,
// closed to connections, the role refused) reads as the store out of reach rather than as a
// statement that failed. The error itself is kept, for the logs.
export class PostgresClient extends pg.Client {
  override connect (): Promise<pg.Client>
  override connect (callback: (error: Error | null) => void): void
  override connect (callback?: (error: Error | null) => void): Promise<pg.Client> | undefined {
    if (callback === undefined) {
      return super.connect().catch((error: unknown) => { throw marked(error) })
    }
    super.connect((error: Error | null) => { callback(error === null || error === undefined ? error : marked(error)) })
    return undefined
  }
}

function marked<T> (error: T): T {
  if (typeof error === 'object' && error !== null) failuresToConnect.add(error)
  return error
}
