import { once } from 'node:events'
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net'
import pg from 'pg'
import t, { type Test } from 'tap'
import { PostgresClient } from '../../src/store/postgres/postgres-client.js'
import { awaitsNewPrimary } from '../../src/store/postgres/postgres-errors.js'

// Which failures a request waits out for DATABASE_FAILOVER_WAIT (a failover's gap, when nothing
// of the request reached a primary) and which get their 503 at once (nothing listens, or the
// request reached the database and its outcome is unknown). The connection failures are real
// ones, from node-postgres and its pool against servers on 127.0.0.1 that behave as a proxy with
// no primary behind it does.

async function listen (t: Test, onConnection: (socket: Socket) => void): Promise<number> {
  const server: Server = createServer(onConnection)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.close() })
  return (server.address() as AddressInfo).port
}

async function failureOf (port: number, connectionTimeoutMillis = 300): Promise<unknown> {
  const pool = new pg.Pool({ host: '127.0.0.1', port, user: 'plant_store', database: 'plant_store', Client: PostgresClient, connectionTimeoutMillis })
  pool.on('error', () => undefined)
  try {
    await pool.query('SELECT 1')
    throw new Error('the query succeeded')
  } catch (error) {
    return error
  } finally {
    await pool.end().catch(() => undefined)
  }
}

function databaseError (code: string): pg.DatabaseError {
  const error = new pg.DatabaseError('message from the server', 0, 'error')
  error.code = code
  return error
}

t.test('a connection a proxy took and closed with no primary behind it is waited out', async (t) => {
  const port = await listen(t, (socket) => socket.destroy())
  const error = await failureOf(port)
  t.match(error, { message: /Connection terminated/ })
  t.ok(awaitsNewPrimary(error))
})

t.test('a connection that timed out while opening is waited out, through the pool\'s wrapping of it', async (t) => {
  const sockets: Array<Socket> = []
  const port = await listen(t, (socket) => { sockets.push(socket) })
  t.teardown(() => { for (const socket of sockets) socket.destroy() })
  const error = await failureOf(port)
  t.match(error, { message: 'Connection terminated due to connection timeout' })
  t.ok(awaitsNewPrimary(error))
})

t.test('a connection refused outright (nothing listens) gets its 503 at once', async (t) => {
  // A port that was free a moment ago, and on which nothing listens now.
  const closed = createServer()
  closed.listen(0, '127.0.0.1')
  await once(closed, 'listening')
  const port = (closed.address() as AddressInfo).port
  closed.close()
  await once(closed, 'close')
  const error = await failureOf(port)
  t.match(error, { code: 'ECONNREFUSED' })
  t.notOk(awaitsNewPrimary(error))
})

t.test('a standby\'s refusal of a write, and a server starting or stopping as it connects, are waited out', async (t) => {
  t.ok(awaitsNewPrimary(databaseError('25006')), 'read_only_sql_transaction')
  t.ok(awaitsNewPrimary(new Error('Client has encountered a connection error and is not queryable')), 'a failed pooled connection, on which nothing was sent')
  t.ok(awaitsNewPrimary(new Error('timeout exceeded when trying to connect')), 'no pooled connection came free')
})

t.test('a failure once the request reached the server is not: its outcome is unknown', async (t) => {
  for (const code of ['57P01', '57P02', '57P03', '40001', '57014']) {
    t.notOk(awaitsNewPrimary(databaseError(code)), `SQLSTATE ${code} from a statement`)
  }
  t.notOk(awaitsNewPrimary(new Error('Connection terminated unexpectedly')), 'a connection lost while a statement was on it')
  t.notOk(awaitsNewPrimary(new TypeError('not a connection failure')))
})
