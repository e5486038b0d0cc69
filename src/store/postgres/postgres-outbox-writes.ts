import type pg from 'pg'
import type { OutboxMessage } from '../outbox.js'
import type { PlantRow } from '../plant-store.js'

// The webhooks' messages of a batch of writes in PostgreSQL, written by the batch's own
// statements, so that a message exists exactly when its change committed (the outbox).

// A pool, or a connection taken from it for a transaction.
export type Queryable = Pick<pg.ClientBase, 'query'>

// A message goes to every enabled endpoint subscribed to its event (events NULL: every one).
const toSubscribedEndpoints = 'JOIN webhook_endpoints e ON e.disabled_at IS NULL AND (e.events IS NULL OR m.event = ANY (e.events))'

// A batch of creates that owes webhooks, in one statement: the plants, and the messages of those
// it inserted, atomic in autocommit. In a transaction of its own (BEGIN, the insert, the
// messages, COMMIT) the batch took four round trips where the creates alone take one: creates
// with an endpoint ran at about a third of their rate without, and at about half in this one
// statement. The messages are made for every plant the statement tries (a replay's or a
// conflict's are dropped by the join): what a batch owes is known only once the plants are in.
const insertPlantsWithMessages = `WITH inserted AS (
  INSERT INTO plants (id, document)
  SELECT * FROM unnest($1::bigint[], $2::jsonb[]) AS batch (id, document) ORDER BY id
  ON CONFLICT (id) DO NOTHING RETURNING id
), messages AS (
  INSERT INTO webhook_messages (endpoint_id, message_id, event, body, traceparent, committed_at, next_attempt_at)
  SELECT e.id, m.message_id, m.event, m.body, m.traceparent, $9::bigint, m.due_at
  FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[])
    AS m (plant_id, message_id, event, body, traceparent, due_at)
  JOIN inserted ON inserted.id = m.plant_id
  ${toSubscribedEndpoints}
)
SELECT id::text AS id FROM inserted`
// The webhooks' messages of a batch in a transaction (one with deletes).
const insertMessages = `INSERT INTO webhook_messages
  (endpoint_id, message_id, event, body, traceparent, committed_at, next_attempt_at)
SELECT e.id, m.message_id, m.event, m.body, m.traceparent, $6::bigint, m.due_at
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[]) AS m (message_id, event, body, traceparent, due_at)
${toSubscribedEndpoints}`

// The messages a batch of creates owes for each plant it inserts, written by the insert itself.
export interface CreatedMessages {
  readonly committedAt: number
  readonly of: (plant: PlantRow) => readonly OutboxMessage[]
}

// The ids the statement inserted, as decimal strings, with the messages of each written.
export async function runBatchStatementWithMessages (client: Queryable, plants: readonly PlantRow[], messages: CreatedMessages): Promise<string[]> {
  const plantIds: string[] = []
  const owed: OutboxMessage[] = []
  for (const plant of plants) {
    for (const message of messages.of(plant)) {
      plantIds.push(plant.id.toString())
      owed.push(message)
    }
  }
  const { rows } = await client.query<{ id: string }>({
    name: 'insert-plants-with-messages',
    text: insertPlantsWithMessages,
    values: [
      plants.map(({ id }) => id.toString()),
      plants.map(({ document }) => document),
      plantIds,
      owed.map(({ messageId }) => messageId),
      owed.map(({ event }) => event),
      owed.map(({ body }) => body),
      owed.map(({ traceparent }) => traceparent ?? null),
      owed.map(({ dueAt }) => dueAt.toString()),
      messages.committedAt.toString(),
    ],
  })
  return rows.map(({ id }) => id)
}

export async function writeMessages (client: Queryable, messages: readonly OutboxMessage[], committedAt: number): Promise<void> {
  if (messages.length === 0) return
  await client.query(insertMessages, [
    messages.map(({ messageId }) => messageId),
    messages.map(({ event }) => event),
    messages.map(({ body }) => body),
    messages.map(({ traceparent }) => traceparent ?? null),
    messages.map(({ dueAt }) => dueAt.toString()),
    committedAt.toString(),
  ])
}
