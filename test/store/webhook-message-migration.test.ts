import t from 'tap'
import { beforeEveryMessage } from '../../src/store/webhook-store.js'
import { webhookBody } from '../../src/webhooks/webhook-request.js'
import { migrateAsTheReleaseAt, runOnOwnConnection, openTestStore, type TestDatabase, testOnEveryBackend, withOwnConnection } from '../support/test-databases.js'

// Until schema version 9 a message kept its body; since, it keeps its plant, and the webhooks
// compose the body as they send it. A message written before, perhaps attempted already, is sent
// after the migration with the bytes it was sent with: its id, trace and attempts as they were.

const endpointId = '00000000-0000-4000-8000-000000000001'

// Bodies as the releases before wrote them (`{"type":…,"timestamp":…,"data":{"id":…,…}}`): ids at
// both ends of int64, a plant whose document is empty, and a name holding what the body's
// members are told apart by, escaped.
const committedAt = Date.parse('2026-11-25T10:00:00.123Z')
const bodies = [
  '{"type":"newPlant","timestamp":"2026-11-25T10:00:00.123Z","data":{"id":9223372036854775807,"name":"Fern","tag":"shade"}}',
  '{"type":"plantDeleted","timestamp":"2026-11-25T10:00:00.123Z","data":{"id":-9223372036854775808}}',
  '{"type":"newPlant","timestamp":"2026-11-25T10:00:00.123Z","data":{"id":7,"name":"Ivy, \\"data\\":{\\"id\\":8}","tag":"é ✓"}}',
]

// The second message was attempted once and is due again; the third failed for good. (No body
// here holds a single quote, so each is written as an SQL literal, alike on both backends.)
async function writeAsTheReleaseBefore (database: TestDatabase): Promise<void> {
  await withOwnConnection(database, async (connection) => migrateAsTheReleaseAt(connection, 8))
  await runOnOwnConnection(database, `INSERT INTO webhook_endpoints (id, url, secret, created_at) VALUES ('${endpointId}', 'http://127.0.0.1:1/hook', 'whsec_a', 1)`)
  const traceparents = ["'00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'", 'NULL', 'NULL']
  const nextAttemptAts = [committedAt, committedAt + 1, 'NULL']
  for (const [index, body] of bodies.entries()) {
    await runOnOwnConnection(database, `INSERT INTO webhook_messages (endpoint_id, message_id, event, body, traceparent, committed_at, attempts, next_attempt_at)
      VALUES ('${endpointId}', 'msg_${String(index).padStart(32, '0')}', '${body.includes('plantDeleted') ? 'plantDeleted' : 'newPlant'}', '${body}',
        ${traceparents[index]!}, ${committedAt}, ${index}, ${nextAttemptAts[index]!})`)
  }
}

testOnEveryBackend(t, 'messages written with their bodies are sent with the same bytes after the migration', async (t, database) => {
  await writeAsTheReleaseBefore(database)
  const store = await openTestStore(t, database)
  const due = await store.webhooks.dueMessages(endpointId, committedAt + 10, beforeEveryMessage, 10)
  t.same(due.map(webhookBody), bodies.slice(0, 2), 'the bodies composed again are those written')
  t.same(due.map(({ messageId, traceparent, attempts }) => [messageId, traceparent, attempts]), [
    [`msg_${'0'.repeat(32)}`, '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 0],
    [`msg_${'0'.repeat(31)}1`, null, 1],
  ], 'with their ids, traces and attempts')
  t.same(due.map(({ plant }) => plant), [
    { id: 9223372036854775807n, document: '{"name":"Fern","tag":"shade"}' },
    { id: -9223372036854775808n, document: '{}' },
  ], 'each with its plant')
  t.match(await store.webhooks.listEndpoints(), [{ pendingMessages: 2, failedMessages: 1 }], 'the one failed for good is kept, and counted')

  // Failed for good, the third is read only once it is rescheduled; it is composed alike.
  await store.webhooks.rescheduleMessage(endpointId, (await readFailedSeq(database))!, 3, committedAt)
  const third = (await store.webhooks.dueMessages(endpointId, committedAt + 10, beforeEveryMessage, 10)).find(({ plant }) => plant.id === 7n)
  t.equal(third === undefined ? undefined : webhookBody(third), bodies[2], 'a name holding what bodies are made of is kept whole')
})

async function readFailedSeq (database: TestDatabase): Promise<number | undefined> {
  const [row] = await runOnOwnConnection<{ seq: bigint | string }>(database, 'SELECT seq FROM webhook_messages WHERE next_attempt_at IS NULL')
  return row === undefined ? undefined : Number(row.seq)
}
