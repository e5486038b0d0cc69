import t from 'tap'
import { buildTestApp } from './support/helper.js'
import { testOnEveryBackend, withOwnConnection } from './support/test-databases.js'
import { startWebhookReceiver } from './support/webhook-receiver.js'
import { registerEndpoint, webhookTestSettings } from './support/webhooks.js'

// A clean stop waits for the attempts in flight, and meanwhile extends the leases of their
// endpoints so that no other instance sends them again (test/reliability/webhook-clean-stop
// has two instances). An endpoint taken over all the same (this instance's lease lapsed while the
// store was out of its reach) is the next holder's: the stop cuts its attempts short at its
// next extension, and records neither a failure of the endpoint nor an attempt of a message, as
// a renewal that finds the lease gone does. (A renewal that ran between the test's take-over and
// the stop would cut them too; the stop follows the take-over at once, well within the 2 s
// between renewals.)

interface EndpointRow { lease_owner: string | null, last_failure_at: unknown, attempts: unknown }

const takenOverAt = 'another instance'

testOnEveryBackend(t, 'a stop lets go at once of an endpoint another instance took over, recording no failure or attempt', async (t, database) => {
  const receiver = await startWebhookReceiver(t, () => 'hang')
  const timeoutSeconds = 5
  const stoppingApp = await buildTestApp(t, { DATABASE_URL: database.url, ...webhookTestSettings, WEBHOOK_TIMEOUT: timeoutSeconds })
  await registerEndpoint(t, stoppingApp, receiver.url)
  await stoppingApp.createPlant({ id: 1, name: 'Fern' })
  await receiver.waitFor(1)

  const takeOver = `UPDATE webhook_endpoints SET lease_owner = '${takenOverAt}', lease_until = ${Date.now() + 3_600_000}`
  await withOwnConnection(database, async (connection) => {
    if (connection.backend === 'SQLite') connection.sqlite.exec(takeOver)
    else await connection.postgres.query(takeOver)
  })
  const stopping = performance.now()
  await stoppingApp.app.close()
  const stoppedInMs = performance.now() - stopping
  t.ok(stoppedInMs < timeoutSeconds * 1000 / 2, `the stop cut the attempt short in ${Math.round(stoppedInMs)} ms, rather than wait for its timeout`)

  const read = 'SELECT e.lease_owner, e.last_failure_at, m.attempts FROM webhook_endpoints e JOIN webhook_messages m ON m.endpoint_id = e.id'
  const rows = await withOwnConnection(database, async (connection) => connection.backend === 'SQLite'
    ? connection.sqlite.prepare(read).all() as EndpointRow[]
    : (await connection.postgres.query<EndpointRow>(read)).rows)
  t.equal(rows.length, 1, 'the message is still owed')
  t.equal(rows[0]?.lease_owner, takenOverAt, 'to the instance that took the endpoint over')
  t.equal(rows[0]?.last_failure_at, null, 'no failure of the endpoint was recorded')
  t.equal(Number(rows[0]?.attempts), 0, 'nor an attempt of the message')
})
