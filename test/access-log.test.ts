import t from 'tap'
import { createPlant, startServer } from './running-server.js'

const token = 'access-log-test-token-0123456789'

t.test('each request is logged once, when answered, with its id, status and time, and no headers', async (t) => {
  const server = await startServer(t, { DATABASE_URL: `sqlite:${t.testdir()}/plants.db`, API_TOKENS: token })
  const created = await createPlant(server.baseUrl, token, { id: 1, name: 'Fern' })
  const refused = await fetch(`${server.baseUrl}/plants?access_token=secret`, { method: 'POST' })
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)

  const lines = server.output().split('\n').filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
  t.equal(lines.filter((line) => line.msg === 'incoming request').length, 0, 'no line before the answer')
  const completed = lines.filter((line) => line.msg === 'request completed')
  t.equal(completed.length, 2, 'one line per request')
  t.match(completed, [
    {
      level: 30, reqId: created.headers.get('x-request-id'), req: { method: 'POST', url: '/plants' },
      res: { statusCode: 200 }, responseTime: Number,
    },
    {
      level: 30, reqId: refused.headers.get('x-request-id'), req: { method: 'POST', url: '/plants?[redacted]' },
      res: { statusCode: 401 }, responseTime: Number,
    },
  ])
  t.notMatch(server.output(), token, 'the token is never logged')
  t.notMatch(server.output(), 'secret', 'nor a query value')
  for (const line of completed) {
    t.notOk('headers' in (line.req as object), 'no request headers')
    t.notOk('headers' in (line.res as object), 'no response headers')
  }
})
