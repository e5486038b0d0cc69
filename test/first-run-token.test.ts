import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { createPlant, startServer } from './support/running-server.js'
import { privatePostgres, privatePostgresSkipReason } from './support/private-postgres.js'

// The first run's token when the database comes up after the service: the service starts, says
// it will check the tokens once the store answers, and then creates and shows the token.

t.test('a first start before PostgreSQL is up still ends with a "default" token, shown once', {
  skip: privatePostgresSkipReason,
}, async (t) => {
  const database = await privatePostgres(t)
  const server = await startServer(t, { DATABASE_URL: database.url })
  t.match(server.output(), /The store cannot be reached yet: its managed tokens are checked/)
  t.notMatch(server.output(), /API token:/)

  await database.start()
  const deadline = Date.now() + 20_000
  let printed: RegExpExecArray | null = null
  while (printed === null && Date.now() < deadline) {
    await sleep(200)
    printed = /API token: (ps_[0-9A-Za-z]{38})\n/.exec(server.output())
  }
  t.ok(printed, 'the token is shown once the store answers')
  const token = printed?.[1] ?? ''
  t.equal(server.output().split(token).length - 1, 1, 'exactly once')
  t.equal((await createPlant(server.baseUrl, token, { id: 1, name: 'Fern' })).status, 200, 'and it works')
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
})
