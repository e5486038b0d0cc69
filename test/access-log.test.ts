import { once } from 'node:events'
import { connect } from 'node:net'
import t from 'tap'
import { createPlant, startServer } from './support/running-server.js'
import { testFolder } from './support/test-folder.js'

const token = 'access-log-test-token-0123456789'

t.test('each request is logged once, when answered, with its id, status and time, and no headers', async (t) => {
  const server = await startServer(t, { DATABASE_URL: `sqlite:${testFolder(t)}/plants.db`, API_TOKENS: token })
  const created = await createPlant(server.baseUrl, token, { id: 1, name: 'Fern' })
  const refused = await fetch(`${server.baseUrl}/plants?access_token=secret`, { method: 'POST' })
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)

  const lines = server.output().split('\n').filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
  t.equal(lines.filter((line) => line.msg === 'incoming request').length, 0, 'no line before the answer')
  const completed = lines.filter((line) => line.msg === 'request completed')
  t.equal(completed.length, 2, 'one line per request')
  for (const response of [created, refused]) {
    const id = response.headers.get('x-request-id')
    t.equal(lines.filter((line) => line.reqId === id).length, 1, `request ${response.status}: exactly one line, whatever its outcome`)
  }
  t.match(completed, [
    {
      level: 30,
      reqId: created.headers.get('x-request-id'),
      req: { method: 'POST', url: '/plants' },
      res: { statusCode: 200 },
      responseTime: Number,
    },
    {
      level: 30,
      reqId: refused.headers.get('x-request-id'),
      req: { method: 'POST', url: '/plants?[redacted]' },
      res: { statusCode: 401 },
      responseTime: Number,
      failure: { code: 40101, message: String },
    },
  ])
  t.notMatch(server.output(), token, 'the token is never logged')
  t.notMatch(server.output(), 'secret', 'nor a query value')
  for (const line of completed) {
    t.notOk('headers' in (line.req as object), 'no request headers')
    t.notOk('headers' in (line.res as object), 'no response headers')
  }
})

t.test('a request too malformed for Fastify is logged without the bytes Node could not parse', async (t) => {
  const server = await startServer(t, { DATABASE_URL: `sqlite:${testFolder(t)}/plants.db`, API_TOKENS: token })
  const { hostname, port } = new URL(server.baseUrl)
  const socket = connect(Number(port), hostname)
  await once(socket, 'connect')
  socket.end(`POST /plants HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\nContent-Length: twelve\r\n\r\n`)
  let answer = ''
  for await (const chunk of socket) answer += String(chunk)
  t.match(answer, /^HTTP\/1\.1 400 /, 'answered with a 400')
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)

  const output = server.output()
  t.match(output, '"parseError":{"name":"Error","code":"HPE_INVALID_CONTENT_LENGTH","message":"Parse Error: ', 'the parse error is logged')
  t.notMatch(output, token, 'the token is never logged')
  t.notMatch(output, Buffer.from(token).join(','), 'not even as bytes')
  t.notMatch(output, 'rawPacket')
})
