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

// The server's refusals of a connection that a wait does not fix at start-up: no such database,
// no such role or a wrong password. Start-up stops on them; once the service has started, the
// same refusal (the database dropped or closed to connections, the role dropped) is an outage:
// every connection that cannot be opened is (PostgresClient).
const misconfigurationSqlStateClasses = new Set(['3D', '28'])

export function isMisconfigurationAtStartUp (error: unknown): boolean {
  return error instanceof pg.DatabaseError && misconfigurationSqlStateClasses.has((error.code ?? '').slice(0, 2))
}

export function isTransientPostgresError (error: unknown): boolean {
  if (error instanceof pg.DatabaseError) {
    const sqlState = error.code ?? ''
    if (permanentSqlStates.has(sqlState)) return false
    return failedToConnect(error) || transientSqlStates.has(sqlState) || transientSqlStateClasses.has(sqlState.slice(0, 2))
  }
  if (!(error instanceof Error)) return false
  const systemCode = (error as NodeJS.ErrnoException).code
  if (systemCode !== undefined) return networkErrorCodes.has(systemCode)
  return connectionFailureMessages.some((message) => error.message.startsWith(message))
}
