import { once } from 'node:events'
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net'
import pg from 'pg'
import t, { type Test } from 'tap'
import { PostgresClient } from '../../src/store/postgres/postgres-client.js'
import { afterCommittedStatement, awaitsNewPrimary, isPoolConnectTimeout } from '../../src/store/postgres/postgres-errors.js'

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

// A message of PostgreSQL's protocol: its type, its length, its body.
function message (type: string, body: Buffer): Buffer {
  const length = Buffer.alloc(4)
  length.writeInt32BE(body.length + 4)
  return Buffer.concat([Buffer.from(type), length, body])
}

function errorResponse (code: string, text: string): Buffer {
  const fields = [['S', 'FATAL'], ['V', 'FATAL'], ['C', code], ['M', text]].map(([field, value]) => `${field}${value}\0`).join('')
  return message('E', Buffer.from(`${fields}\0`))
}

// AuthenticationOk, then ReadyForQuery (idle): the session is open.
const sessionOpen = Buffer.concat([message('R', Buffer.from([0, 0, 0, 0])), message('Z', Buffer.from('I'))])

function databaseError (code: string): pg.DatabaseError {
  const error = new pg.DatabaseError('message from the server', 0, 'error')
  error.code = code
  return error
}

t.test('a connection a proxy took and closed with no primary behind it is waited out', async (t) => {
  const port = await listen(t, (socket) => socket.destroy())
  const error = await failureOf(port)
  t.match(error, { message: /Connection terminated|ECONNRESET/ })
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

t.test('a server starting up or shutting down as the connection opens is waited out', async (t) => {
  const port = await listen(t, (socket) => {
    socket.once('data', () => socket.end(errorResponse('57P03', 'the database system is starting up')))
  })
  const error = await failureOf(port)
  t.match(error, { code: '57P03' })
  t.ok(awaitsNewPrimary(error))
})

t.test('a standby\'s refusal of a write, and a pooled connection that failed before, are waited out', async (t) => {
  t.ok(awaitsNewPrimary(databaseError('25006')), 'read_only_sql_transaction')
  t.ok(awaitsNewPrimary(new Error('Client has encountered a connection error and is not queryable')), 'a failed pooled connection, on which nothing was sent')
  t.notOk(awaitsNewPrimary(new Error('timeout exceeded when trying to connect')), 'no pooled connection came free: overload as often as a failover, the store judges it')
  t.ok(isPoolConnectTimeout(new Error('timeout exceeded when trying to connect')))
})

t.test('a batch of which a statement committed is not, however it failed after', async (t) => {
  const port = await listen(t, (socket) => socket.destroy())
  const error = await failureOf(port)
  t.ok(awaitsNewPrimary(error), 'the same failure, on its own')
  t.notOk(awaitsNewPrimary(afterCommittedStatement(error)), 'after a statement that committed')
  t.notOk(isPoolConnectTimeout(afterCommittedStatement(new Error('timeout exceeded when trying to connect'))))
})

t.test('a connection lost while a statement was on it is not: the statement may have run', async (t) => {
  const port = await listen(t, (socket) => {
    socket.once('data', () => {
      socket.write(sessionOpen)
      socket.once('data', () => socket.destroy())
    })
  })
  const error = await failureOf(port)
  t.match(error, { message: 'Connection terminated unexpectedly' })
  t.notOk(awaitsNewPrimary(error))
})

t.test('a failure once the request reached the server is not: its outcome is unknown', async (t) => {
  for (const code of ['57P01', '57P02', '57P03', '40001', '57014']) {
    t.notOk(awaitsNewPrimary(databaseError(code)), `SQLSTATE ${code} from a statement`)
  }
  t.notOk(awaitsNewPrimary(new TypeError('not a connection failure')))
})
