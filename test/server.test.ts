import { existsSync } from 'node:fs'
import { connect } from 'node:net'
import t from 'tap'
import { Database } from '../src/store/sqlite/sqlite-driver.js'
import { createPlant, startServer } from './support/running-server.js'
import { testFolder } from './support/test-folder.js'

// The service as a process, once started: signals, crashes, racing clients and what it logs of
// a request. Start-up (tokens, settings, summary, log format) is in test/server-start-up.test.ts:
// one file of both came near the suite's 120 s a file in slow phases of a shared machine.

const configuredToken = 'server-test-token-0123456789'

t.test('SIGTERM lets an in-flight request finish, then closes the database', async (t) => {
  const folder = testFolder(t)
  const databaseFile = `${folder}/plants.db`
  const server = await startServer(t, { DATABASE_URL: `sqlite:${databaseFile}`, API_TOKENS: configuredToken })
  const body = JSON.stringify({ id: 42, name: 'Slow fern' })
  const socket = connect(server.port, '127.0.0.1')
  let response = ''
  socket.on('data', (chunk) => { response += chunk.toString() })
  const closed = new Promise((resolve) => socket.on('close', resolve))
  socket.write([
    'POST /plants HTTP/1.1', 'Host: 127.0.0.1', `Authorization: Bearer ${configuredToken}`,
    'Content-Type: application/json', `Content-Length: ${body.length}`, 'Connection: close', '', '',
  ].join('\r\n'))
  socket.write(body.slice(0, 10))
  await new Promise((resolve) => setTimeout(resolve, 200))

  server.child.kill('SIGTERM')
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.equal(server.child.exitCode, null, 'the process waits for the request in flight')
  socket.write(body.slice(10))
  await closed

  t.match(response, /^HTTP\/1\.1 200 OK/)
  t.match(response, /\{"name":"Slow fern"\}$/)
  t.equal(await server.exited, 0)
  t.notOk(existsSync(`${databaseFile}-wal`), 'the database was closed cleanly (its WAL file is gone)')
  const database = new Database(databaseFile, { readonly: true })
  t.teardown(() => database.close())
  t.same(database.prepare("SELECT json_extract(document, '$.name') AS name FROM plants WHERE id = 42").get(), { name: 'Slow fern' })
})

t.test('logs carry a request id and never a token', async (t) => {
  const server = await startServer(t, {
    DATABASE_URL: `sqlite:${testFolder(t)}/plants.db`, API_TOKENS: configuredToken, LOG_LEVEL: 'trace',
  })
  await createPlant(server.baseUrl, configuredToken, { id: 1, name: 'Fern' })
  await createPlant(server.baseUrl, 'wrong-token-that-must-not-be-logged', { id: 1, name: 'Fern' })
  await fetch(`${server.baseUrl}/plants?access_token=query-token-that-must-not-be-logged`, { method: 'POST' })
  server.child.kill('SIGTERM')
  await server.exited
  const output = server.output()
  t.match(output, /"reqId":"[0-9a-f-]{36}"/)
  t.notMatch(output, configuredToken)
  t.notMatch(output, 'wrong-token-that-must-not-be-logged')
  t.notMatch(output, 'query-token-that-must-not-be-logged')
  t.match(output, '"url":"/plants?[redacted]"')
})

t.test('racing creates over real HTTP resolve atomically', async (t) => {
  const server = await startServer(t, { DATABASE_URL: `sqlite:${testFolder(t)}/plants.db`, API_TOKENS: configuredToken })
  const identical = await Promise.all(Array.from({ length: 50 }, () =>
    createPlant(server.baseUrl, configuredToken, { id: 1, name: 'Ivy' })))
  t.same(identical.map((response) => response.status), Array(50).fill(200), '50 identical racers all get 200')

  const names = Array.from({ length: 20 }, (_, index) => `Racer ${index}`)
  const racing = await Promise.all(names.map((name) => createPlant(server.baseUrl, configuredToken, { id: 2, name })))
  const statuses = racing.map((response) => response.status)
  t.equal(statuses.filter((status) => status === 200).length, 1, 'one winner')
  t.equal(statuses.filter((status) => status === 409).length, 19, '19 conflicts')
  const winner = names[statuses.indexOf(200)]
  t.equal((await createPlant(server.baseUrl, configuredToken, { id: 2, name: winner })).status, 200, 'the winner is stored')
})

t.test('an acknowledged create survives the process being killed', async (t) => {
  const environment = { DATABASE_URL: `sqlite:${testFolder(t)}/plants.db`, API_TOKENS: configuredToken }
  const first = await startServer(t, environment)
  t.equal((await createPlant(first.baseUrl, configuredToken, { id: 7, name: 'Survivor' })).status, 200)
  first.child.kill('SIGKILL')
  await first.exited

  const second = await startServer(t, environment)
  t.equal((await createPlant(second.baseUrl, configuredToken, { id: 7, name: 'Survivor' })).status, 200, 'a replay')
  t.equal((await createPlant(second.baseUrl, configuredToken, { id: 7, name: 'Usurper' })).status, 409, 'the plant is there')
})

t.test('SIGTERM does not wait for ever on a client whose body stalls', async (t) => {
  const databaseFile = `${testFolder(t)}/plants.db`
  const server = await startServer(t, { DATABASE_URL: `sqlite:${databaseFile}`, API_TOKENS: configuredToken, REQUEST_TIMEOUT: '500' })
  const socket = connect(server.port, '127.0.0.1')
  t.teardown(() => { socket.destroy() })
  socket.on('error', () => {})
  socket.write([
    'POST /plants HTTP/1.1', 'Host: 127.0.0.1', `Authorization: Bearer ${configuredToken}`,
    'Content-Type: application/json', 'Content-Length: 100', '', '{"id":',
  ].join('\r\n'))
  await new Promise((resolve) => setTimeout(resolve, 100))
  const started = Date.now()
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
  t.ok(Date.now() - started < 5000, `stopped in ${Date.now() - started} ms`)
  t.notOk(existsSync(`${databaseFile}-wal`), 'the database was closed cleanly')
})
