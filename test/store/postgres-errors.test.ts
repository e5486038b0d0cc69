import pg from 'pg'
import t from 'tap'
import { isOutageAtStartUp, isTransientPostgresError } from '../../src/store/postgres/postgres-errors.js'

// Which failures are an outage (503, retry later) and which are bugs or misconfiguration (500,
// or a refused start-up). The errors are built as the driver builds them.

function databaseError (code: string): pg.DatabaseError {
  const error = new pg.DatabaseError('message from the server', 0, 'error')
  error.code = code
  return error
}

function systemError (code: string): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code })
}

t.test('outages are transient', async (t) => {
  for (const code of ['08006', '08001', '57P01', '57P03', '53300', '40001', '40P01', '55P03', '57014', '25006']) {
    t.ok(isTransientPostgresError(databaseError(code)), `SQLSTATE ${code}`)
  }
  for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']) {
    t.ok(isTransientPostgresError(systemError(code)), code)
  }
  for (const message of [
    'Connection terminated unexpectedly', 'Connection terminated due to connection timeout', 'timeout expired',
    'timeout exceeded when trying to connect', 'Query read timeout',
  ]) {
    t.ok(isTransientPostgresError(new Error(message)), message)
  }
})

t.test('bugs and misconfiguration are not', async (t) => {
  for (const code of ['42P01', '42601', '23505', '22P05', '3D000', '28P01', '28000', '08P01']) {
    t.notOk(isTransientPostgresError(databaseError(code)), `SQLSTATE ${code}`)
  }
  for (const code of ['ERR_INVALID_ARG_TYPE', 'ERR_TLS_CERT_ALTNAME_INVALID', 'SELF_SIGNED_CERT_IN_CHAIN', 'ENOENT', 'EACCES']) {
    t.notOk(isTransientPostgresError(systemError(code)), code)
  }
  t.notOk(isTransientPostgresError(new TypeError('cannot read properties of undefined')))
  t.notOk(isTransientPostgresError('a string'))
})

// At start-up a server that refuses the connection stops the service, as before it; after it,
// any refusal of a connection is an outage (test/postgres-refused-connections.test.ts): an error
// that did not come from opening a connection is judged as before.
t.test('the refusals that stop start-up', async (t) => {
  for (const code of ['3D000', '28P01', '28000', '42704', '42501', '22023', '55000']) {
    t.notOk(isOutageAtStartUp(databaseError(code)), `SQLSTATE ${code} stops start-up`)
    t.notOk(isTransientPostgresError(databaseError(code)), `SQLSTATE ${code} from a statement is no outage`)
  }
  for (const code of ['08006', '57P03', '53300']) t.ok(isOutageAtStartUp(databaseError(code)), `SQLSTATE ${code} is an outage`)
})
