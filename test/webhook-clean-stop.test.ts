import t from 'tap'
import { buildTestApp } from './support/helper.js'
import { type PostgresTestDatabase, runAsAdmin, runOnOwnConnection, type TestDatabase, testOnEveryBackend } from './support/test-databases.js'
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
  await runOnOwnConnection(database, takeOver)
  const stopping = performance.now()
  await stoppingApp.app.close()
  const stoppedInMs = performance.now() - stopping
  t.ok(stoppedInMs < timeoutSeconds * 1000 / 2, `the stop cut the attempt short in ${Math.round(stoppedInMs)} ms, rather than wait for its timeout`)

  const read = 'SELECT e.lease_owner, e.last_failure_at, m.attempts FROM webhook_endpoints e JOIN webhook_messages m ON m.endpoint_id = e.id'
  const rows = await runOnOwnConnection<EndpointRow>(database, read)
  t.equal(rows.length, 1, 'the message is still owed')
  t.equal(rows[0]?.lease_owner, takenOverAt, 'to the instance that took the endpoint over')
  t.equal(rows[0]?.last_failure_at, null, 'no failure of the endpoint was recorded')
  t.equal(Number(rows[0]?.attempts), 0, 'nor an attempt of the message')
})

// The store refuses to delete the messages delivered to the endpoints named, as a real failure
// of the statement (a trigger), in the database the service writes; none named lifts it.
async function refuseDeletingMessagesOf (database: TestDatabase, endpointIds: readonly string[]): Promise<void> {
  const named = endpointIds.map((id) => `'${id}'`).join(', ')
  if (database.backend === 'SQLite') {
    await runOnOwnConnection(database, 'DROP TRIGGER IF EXISTS refuse_deletes')
    if (endpointIds.length > 0) {
      await runOnOwnConnection(database, `CREATE TRIGGER refuse_deletes BEFORE DELETE ON webhook_messages WHEN OLD.endpoint_id IN (${named})
        BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`)
    }
    return
  }
  const { schema } = database as PostgresTestDatabase
  const refused = endpointIds.length > 0 ? `OLD.endpoint_id IN (${named})` : 'false'
  await runAsAdmin(`CREATE OR REPLACE FUNCTION ${schema}.refuse_deletes() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF ${refused} THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN OLD; END $$`)
  await runAsAdmin(`CREATE OR REPLACE TRIGGER refuse_deletes BEFORE DELETE ON ${schema}.webhook_messages
    FOR EACH ROW EXECUTE FUNCTION ${schema}.refuse_deletes()`)
}

// What was delivered is deleted from the outbox a little later, together. A deletion the store
// refuses holds up no other endpoint's deliveries, and is tried again: its messages are neither
// lost from it nor sent again meanwhile. Once the other endpoint's refusal is lifted, the service
// stops at once: its kept message is deleted by a last round or by the stop, which records each
// endpoint's on its own, whichever endpoint the store still refuses comes first.
testOnEveryBackend(t, "a refused deletion of delivered messages holds up no other endpoint, is tried again, and at a stop fails only its own endpoint's", async (t, database) => {
  const receiver = await startWebhookReceiver(t)
  const testApp = await buildTestApp(t, { DATABASE_URL: database.url, ...webhookTestSettings })
  const refused = await registerEndpoint(t, testApp, `${receiver.url}/refused`)
  const other = await registerEndpoint(t, testApp, `${receiver.url}/other`)
  // Rounds try the deletion every 100 ms or so, and read the outbox from its start every second.
  const severalRounds = async (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1200))

  await refuseDeletingMessagesOf(database, [refused.id])
  await testApp.createPlant({ id: 1, name: 'Fern' })
  await receiver.waitFor(2)
  await severalRounds()
  await testApp.createPlant({ id: 2, name: 'Fern' })
  await receiver.waitFor(4)
  t.pass("the other endpoint's deliveries went on while the refused endpoint's deletions failed")

  await refuseDeletingMessagesOf(database, [refused.id, other.id])
  await testApp.createPlant({ id: 3, name: 'Fern' })
  await receiver.waitFor(6)
  await severalRounds()
  t.equal(receiver.received.length, 6, 'nothing was sent again while the deletions were refused')

  await refuseDeletingMessagesOf(database, [refused.id])
  await testApp.app.close()
  const read = 'SELECT endpoint_id FROM webhook_messages ORDER BY seq'
  const rows = await runOnOwnConnection<{ endpoint_id: string }>(database, read)
  t.same(rows.map(({ endpoint_id: id }) => id), [refused.id, refused.id, refused.id],
    "the other endpoint's messages were deleted, the last by the time the service stopped; the refused one's are still owed")
})
