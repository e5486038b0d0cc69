import pg from 'pg'
import { failedToConnect } from './postgres-client.js'

// SQLSTATEs that say "not now" rather than "never": the same request may succeed later.
const transientSqlStates = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available
  '57014', // query_canceled: statement_timeout
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or in recovery
  '25006', // read_only_sql_transaction: a failover left us on a standby for now
])
const readOnlySqlTransaction = '25006'
const cannotConnectNow = '57P03'
// node-postgres', when a statement is asked of a client whose connection failed or was closed:
// the statement is never sent.
const notQueryableMessageEnd = 'and is not queryable'
// A connection cut as it opened (a proxy with no server to pass it to may reset it).
const connectionCutCodes = new Set(['ECONNRESET', 'EPIPE'])
// node-postgres' own, for a connection closed or timed out as it opened.
const openingCutMessages = ['Connection terminated', 'timeout expired']
// pg-pool's, when no connection came free, or opened, within connectionTimeoutMillis.
const poolConnectTimeoutMessage = 'timeout exceeded when trying to connect'
const transientSqlStateClasses = new Set([
  '08', // connection_exception (but not 08P01, below)
  '53', // insufficient_resources: too many connections, disk full, out of memory
])
// protocol_violation: a pooler in between that refuses the startup parameters, for one. No
// wait fixes it, so it must stop start-up rather than leave the service answering 503.
const permanentSqlStates = new Set(['08P01'])

// Node's socket errors that mean the server is down, unreachable or went away.
const networkErrorCodes = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN',
  'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED',
])

// What the driver and the pool say when the connection itself failed, timed out or was cut.
const connectionFailureMessages = [
  'Connection terminated',
  'timeout expired', // a client's connectionTimeoutMillis
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'Client has encountered a connection error',
]

// Errors of a batch that failed after one of its statements ran, on its own, and so committed.
const afterACommit = new WeakSet<object>()

// Marks the error of a batch of which a statement committed: sent again, it would race the writes
// other clients made since, so it is not one that reached no primary.
export function afterCommittedStatement<T> (error: T): T {
  if (typeof error === 'object' && error !== null) afterACommit.add(error)
  return error
}

// Nothing of the request reached a primary, and one may be on its way: a proxy in front took the
// connection and closed it (it had no server to pass it to) or let it time out as it opened (a
// failover's gap); the server is starting up or shutting down (57P03 as it connects); the pool's
// connection had already failed, and the driver sent nothing on it (an open transaction's COMMIT
// never reached the server); or the server reached is a standby, which refuses a write before it
// does anything (25006). Sending the same request again repeats nothing that was done. Not a
// connection refused outright (nothing listens: an outage, answered at once), a server's refusal
// of the login (a database or role that is wrong, which waiting does not mend), nor the failure of
// a batch after one of its statements committed. The pool's own timeout (no connection came free)
// is the store's to judge (isPoolConnectTimeout): it is overload as often as a failover.
export function awaitsNewPrimary (error: unknown): boolean {
  if (typeof error !== 'object' || error === null || afterACommit.has(error)) return false
  if (error instanceof pg.DatabaseError) {
    return error.code === readOnlySqlTransaction || (failedToConnect(error) && error.code === cannotConnectNow)
  }
  if (!(error instanceof Error)) return false
  if (error.message.endsWith(notQueryableMessageEnd)) return true
  if (!failedToConnect(error)) return false
  const systemCode = (error as NodeJS.ErrnoException).code
  if (systemCode !== undefined) return connectionCutCodes.has(systemCode)
  return openingCutMessages.some((message) => error.message.startsWith(message))
}

// pg-pool's own timeout: no connection came free, or opened, in time.
export function isPoolConnectTimeout (error: unknown): boolean {
  return error instanceof Error && error.message.startsWith(poolConnectTimeoutMessage) && !afterACommit.has(error)
}

// Once the service has started, a connection the server refuses is an outage too, whatever it
// says (the database dropped or closed to connections, the role dropped): requests get a 503
// until it takes connections again. At start-up the same refusal is misconfiguration, and stops
// the service (isOutageAtStartUp).
export function isTransientPostgresError (error: unknown): boolean {
  return isOutageAtStartUp(error) || (error instanceof pg.DatabaseError && failedToConnect(error) && !permanentSqlStates.has(error.code ?? ''))
}

// A refusal from the server while connecting, for the logs (a 503 says only that the store is
// unavailable).
export function isRefusedConnection (error: unknown): error is pg.DatabaseError {
  return error instanceof pg.DatabaseError && failedToConnect(error)
}

export function isOutageAtStartUp (error: unknown): boolean {
  if (error instanceof pg.DatabaseError) {
    const sqlState = error.code ?? ''
    if (permanentSqlStates.has(sqlState)) return false
    return transientSqlStates.has(sqlState) || transientSqlStateClasses.has(sqlState.slice(0, 2))
  }
  if (!(error instanceof Error)) return false
  const systemCode = (error as NodeJS.ErrnoException).code
  if (systemCode !== undefined) return networkErrorCodes.has(systemCode)
  return connectionFailureMessages.some((message) => error.message.startsWith(message))
}
