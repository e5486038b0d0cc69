import { once } from 'node:events'
import { connect } from 'node:net'
import t from 'tap'
import { checkAgainstSpec, createHeaders, type RawResponse, request, startListening } from './support/raw-http.js'
import { readStoredIds } from './support/stored-plants.js'

// What only a real socket shows: Expect, Host, pipelining, oversized headers and slow bodies.
// Each of these would get a bare answer from Node's HTTP server; here every one is the spec's.

const plant = JSON.stringify({ id: 1, name: 'Fern' })

t.test('an unknown expectation is ignored, not answered with a bare 417', async (t) => {
  const { open } = await startListening(t)
  const client = open()
  client.write(request('POST', '/plants', createHeaders({ Expect: 'something-else', 'Content-Length': String(plant.length), Connection: 'close' }), plant))
  const [response] = await client.received()
  t.equal(response?.statusCode, 200)
  if (response !== undefined) t.same(checkAgainstSpec(t, 'POST', '/plants', response), { name: 'Fern' })
})

t.test('Expect: 100-continue is answered only once the credentials are good', async (t) => {
  const { open } = await startListening(t)

  const anonymous = open()
  anonymous.write(request('POST', '/plants', {
    Host: 'plants.test', 'Content-Type': 'application/json', 'Content-Length': String(plant.length), Expect: '100-continue',
  }, ''))
  const [refused] = await anonymous.received(1000)
  t.equal(refused?.statusCode, 401, 'no 100 Continue: the body is never invited')
  if (refused !== undefined) checkAgainstSpec(t, 'POST', '/plants', refused)

  const authenticated = open()
  authenticated.write(request('POST', '/plants', createHeaders({
    'Content-Length': String(plant.length), Expect: '100-continue', Connection: 'close',
  }), ''))
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.same(authenticated.receivedSoFar().map((response) => response.statusCode), [100], 'invited to send the body')
  authenticated.write(plant)
  const responses = await authenticated.received()
  t.same(responses.map((response) => response.statusCode), [100, 200])
})

t.test('an HTTP/1.1 request without Host is a 400 with the Error body', async (t) => {
  const { open } = await startListening(t)
  const client = open()
  client.write(request('GET', '/healthz', { Connection: 'close' }))
  const [response] = await client.received()
  t.equal(response?.statusCode, 400)
  if (response !== undefined) {
    t.same(checkAgainstSpec(t, 'GET', '/healthz', response), { error: 40007, message: 'the Host header is required' })
  }
})

t.test('a Host sent twice or that is not a host, and a second Authorization or Content-Type, are each a 400 40007, and nothing is stored', async (t) => {
  const { open, databaseFile } = await startListening(t)
  const authorization = createHeaders().Authorization!
  const cases: Array<[string, string, RegExp]> = [
    ['GET /healthz', 'Host: a\r\nHost: b', /the Host header must be sent once/],
    ['GET /healthz', 'Host: a b', /the Host header "a b" is not a host/],
    ['GET /healthz', 'Host: a/b@c', /is not a host/],
    ...['[zz]', '[::1::2]', '[1.2.3.4]', '[v1]', '%', 'a%zz', 'a%2', '[::1', 'a:b'].map((host): [string, string, RegExp] => ['GET /healthz', `Host: ${host}`, /is not a host/]),
    ['POST /plants', `Host: a\r\nAuthorization: ${authorization}\r\nauthorization: Bearer not-this-one\r\nContent-Type: application/json`, /the Authorization header must be sent once/],
    ['POST /plants', `Host: a\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\nCONTENT-TYPE: text/plain`, /the Content-Type header must be sent once/],
  ]
  for (const [line, headers, message] of cases) {
    const client = open()
    client.write(`${line} HTTP/1.1\r\n${headers}\r\nContent-Length: ${plant.length}\r\nConnection: close\r\n\r\n${line.startsWith('POST') ? plant : ''}`)
    const [response] = await client.received()
    t.equal(response?.statusCode, 400, `${JSON.stringify(headers)}: 400`)
    if (response !== undefined) t.match(checkAgainstSpec(t, line.split(' ')[0]!, line.split(' ')[1]!, response), { error: 40007, message })
  }
  t.same(readStoredIds(databaseFile), [], 'no create went through')
  for (const host of ['plants.test', 'PLANTS.Test:8080', 'plants.test.', 'xn--bcher-kva.example', '127.0.0.1:3000', '[::1]:3000', '[fe80::1%25eth0]:3000', '[v1.x]', '']) {
    const client = open()
    client.write(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)
    t.equal((await client.received())[0]?.statusCode, 200, `Host: ${JSON.stringify(host)} is a host`)
  }
})

t.test('a request target that is neither a path nor a URL is a 400 40007, and reaches no operation', async (t) => {
  const { open, databaseFile } = await startListening(t)
  const send = async (line: string, body = ''): Promise<RawResponse | undefined> => {
    const client = open()
    const [method, target] = line.split(' ')
    client.write(request(method!, target!, createHeaders({ Connection: 'close', ...(body === '' ? {} : { 'Content-Length': String(body.length) }) }), body))
    return (await client.received())[0]
  }
  const plant = JSON.stringify({ id: 7, name: 'Fern' })
  t.equal((await send('POST /plants', plant))?.statusCode, 200, 'a plant to read and delete')
  for (const line of ['GET *plants/7', 'DELETE *plants/7', 'GET *', 'GET *healthz']) {
    const response = await send(line)
    t.equal(response?.statusCode, 400, `${line}: 400`)
    if (response !== undefined) t.match(checkAgainstSpec(t, 'GET', '/healthz', response), { error: 40007, message: /is neither a path nor a URL/ })
  }
  t.same(readStoredIds(databaseFile), [7n], 'the delete with that target deleted nothing')
  t.equal((await send('GET http://plants.test/plants/7'))?.statusCode, 200, 'a whole URL (absolute-form) is a target')
  t.equal((await send('OPTIONS *'))?.statusCode, 404, 'OPTIONS * matches no path')
})

t.test('a body with a transfer coding but chunked is a 415, and is not stored', async (t) => {
  const { open, databaseFile } = await startListening(t)
  const chunked = (id: number): string => {
    const body = JSON.stringify({ id, name: 'Fern' })
    return `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`
  }
  for (const [coding, status] of [['gzip, chunked', 415], ['chunked', 200]] as const) {
    const client = open()
    client.write(request('POST', '/plants', createHeaders({ 'Transfer-Encoding': coding, Connection: 'close' }), chunked(status)))
    const [response] = await client.received()
    t.equal(response?.statusCode, status, `Transfer-Encoding: ${coding}`)
    if (response !== undefined && status === 415) t.match(checkAgainstSpec(t, 'POST', '/plants', response), { error: 41501, message: /Transfer-Encoding is "gzip, chunked"/ })
  }
  t.same(readStoredIds(databaseFile), [200n], 'only the chunked create was stored')
})

t.test('a path parameter longer than a hundred characters reaches the spec\'s validation', async (t) => {
  const { open } = await startListening(t)
  const send = async (path: string): Promise<number | undefined> => {
    const client = open()
    client.write(request('GET', path, createHeaders({ Connection: 'close' })))
    const [response] = await client.received()
    if (response !== undefined) checkAgainstSpec(t, 'GET', path, response)
    return response?.statusCode
  }
  const plant = JSON.stringify({ id: 1, name: 'Fern' })
  const client = open()
  client.write(request('POST', '/plants', createHeaders({ 'Content-Length': String(plant.length), Connection: 'close' }), plant))
  t.equal((await client.received())[0]?.statusCode, 200)
  t.equal(await send(`/plants/1.${'0'.repeat(150)}`), 200, 'the integer 1, written with 150 zeros after its point')
  t.equal(await send(`/plants/1${'0'.repeat(150)}`), 400, 'an integer past int64 (40004)')
  t.equal(await send(`/plants/${'x'.repeat(300)}`), 400, 'not an integer (40003)')
})

t.test('a malformed request pipelined after a create is answered after the create, not instead of it', async (t) => {
  const { open, databaseFile } = await startListening(t)
  const client = open()
  client.write(request('POST', '/plants', createHeaders({ 'Content-Length': String(plant.length) }), plant) + 'NOT HTTP AT ALL\r\n\r\n')
  const [created, malformed] = await client.received()
  t.same([created?.statusCode, malformed?.statusCode], [200, 400])
  if (malformed !== undefined) {
    t.same(checkAgainstSpec(t, 'POST', '/plants', malformed), { error: 40007, message: 'the HTTP request is malformed' })
  }
  t.same(readStoredIds(databaseFile), [1n])
})

t.test('header fields over Node\'s limit are a 431 with the Error body', async (t) => {
  const { open } = await startListening(t)
  const client = open()
  client.write(request('GET', '/healthz', { Host: 'plants.test', 'X-Padding': 'x'.repeat(20_000) }))
  const [response] = await client.received()
  t.equal(response?.statusCode, 431)
  if (response !== undefined) {
    t.same(checkAgainstSpec(t, 'GET', '/healthz', response), { error: 43101, message: 'the request header fields are too large' })
  }
})

t.test('a body that does not arrive within REQUEST_TIMEOUT is a 408, and nothing is stored', async (t) => {
  const { open, databaseFile } = await startListening(t, { REQUEST_TIMEOUT: 300 })
  const client = open()
  client.write(request('POST', '/plants', createHeaders({ 'Content-Length': String(plant.length) }), plant.slice(0, 5)))
  const started = Date.now()
  const [response] = await client.received(5000)
  t.equal(response?.statusCode, 408)
  t.ok(Date.now() - started < 3000, 'answered within a few seconds')
  if (response !== undefined) {
    t.same(checkAgainstSpec(t, 'POST', '/plants', response), { error: 40801, message: 'the request was not received in full in time' })
  }
  t.same(readStoredIds(databaseFile), [])
})

t.test('a request refused before its body arrived gets one answer and its connection closed', async (t) => {
  const { open, databaseFile } = await startListening(t, { REQUEST_TIMEOUT: 300 })
  const client = open()
  client.write(request('POST', '/plants', { Host: 'plants.test', 'Content-Type': 'application/json', 'Content-Length': '100' }, '{"id":1'))
  const responses = await client.received(1500)
  t.same(responses.map((response) => response.statusCode), [401], 'no 408 follows the 401')
  t.equal(responses[0]?.headers.connection, 'close')
  t.same(readStoredIds(databaseFile), [])
})

t.test('CONNECT gets the same 405 or 404 as any other undeclared method', async (t) => {
  const { open } = await startListening(t)
  const onPlants = open()
  onPlants.write(request('CONNECT', '/plants', { Host: 'plants.test' }))
  const [notAllowed] = await onPlants.received()
  t.equal(notAllowed?.statusCode, 405)
  t.equal(notAllowed?.headers.allow, 'GET, POST')
  if (notAllowed !== undefined) checkAgainstSpec(t, 'CONNECT', '/plants', notAllowed)

  const tunnel = open()
  tunnel.write(request('CONNECT', 'example.com:443', { Host: 'example.com:443' }))
  const [notFound] = await tunnel.received()
  t.equal(notFound?.statusCode, 404)
  t.same(JSON.parse(notFound?.body ?? '{}'), { error: 40401, message: 'no route for CONNECT example.com:443' })
})

t.test('100 Continue is not sent for a body that would be refused', async (t) => {
  const { open } = await startListening(t, { BODY_LIMIT: 1024 })
  const refusals: Array<[Record<string, string>, number]> = [
    [{ 'Content-Type': 'text/plain', 'Content-Length': '10' }, 415],
    [{ 'Content-Type': 'application/json', 'Content-Length': '5000' }, 413],
  ]
  for (const [headers, status] of refusals) {
    const client = open()
    client.write(request('POST', '/plants', { ...createHeaders(headers), Expect: '100-continue' }))
    const responses = await client.received(1500)
    t.same(responses.map((response) => response.statusCode), [status], `${headers['Content-Type']}, ${headers['Content-Length']} bytes`)
  }
})

t.test('an answer written while the app closes, before Node\'s server does, tells its client to close', async (t) => {
  // A preClose hook that takes its time, as stopping webhook deliveries can.
  const { open, app, databaseFile } = await startListening(t, {}, (app) => {
    app.addHook('preClose', async () => { await new Promise((resolve) => setTimeout(resolve, 500)) })
  })
  const client = open()
  // Routed at its headers, before the app begins to close; answered once its body arrives, after.
  client.write(request('POST', '/plants', createHeaders({ 'Content-Length': String(plant.length) }), plant.slice(0, 5)))
  await new Promise((resolve) => setTimeout(resolve, 100))
  const closed = app.close()
  await new Promise((resolve) => setTimeout(resolve, 100))
  client.write(plant.slice(5))
  const [created] = await client.received()
  await closed
  t.equal(created?.statusCode, 200)
  t.equal(created?.headers.connection, 'close', 'the client is told the connection closes')
  if (created !== undefined) checkAgainstSpec(t, 'POST', '/plants', created)
  t.same(readStoredIds(databaseFile), [1n], 'the plant is stored')
})

t.test('a connection accepted while the app closes, and never used, is closed once idle for the grace', async (t) => {
  // The server still listens while the preClose hooks run (webhook deliveries stopping).
  const { app, port } = await startListening(t, {}, (app) => {
    app.addHook('preClose', async () => { await new Promise((resolve) => setTimeout(resolve, 500)) })
  })
  const startedAt = performance.now()
  const closed = app.close()
  // After the shutdown's first sweep has found no connection open.
  await new Promise((resolve) => setTimeout(resolve, 250))
  const late = connect(port, '127.0.0.1')
  t.teardown(() => { late.destroy() })
  await once(late, 'connect')
  await closed
  t.ok(performance.now() - startedAt < 5000, 'closed within the grace of a second or so, not REQUEST_TIMEOUT later')
})
