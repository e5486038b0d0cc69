import t from 'tap'
import { runOnOwnConnection, openTestStore, type TestDatabase, testOnEveryBackend } from '../support/test-databases.js'

// An endpoint's lease. Its failures in a row and its rest are kept with it: an instance that takes
// its lease over, its holder gone without a word (SIGKILL), goes on from them rather than from
// none (src/webhooks/endpoint-delivery.ts), and a delivery clears them. A holder that is stopping
// extends the leases it holds while its last attempts end, and takes no other.

const endpointId = '00000000-0000-4000-8000-000000000001'
const now = 1_000_000
const leaseMs = 10_000

// A statement as a release before schema version 8 writes it, through a connection of its own.
async function runAsAnOlderRelease (database: TestDatabase, sql: string): Promise<void> {
  await runOnOwnConnection(database, sql)
}

testOnEveryBackend(t, "the holder's record of failures and rest is what the next holder is leased", async (t, database) => {
  const { webhooks } = await openTestStore(t, database)
  await webhooks.createEndpoint({ id: endpointId, url: 'http://127.0.0.1:1/hook', events: null, secret: 'whsec_x', createdAt: now })
  t.match(await webhooks.leaseEndpoints('first', now, now + leaseMs), [{ id: endpointId, failingSince: null, failuresInARow: 0, restingUntil: null }],
    'a new endpoint has failed nothing and rests not')

  await webhooks.recordFailure(endpointId, { at: now + 100, reason: 'answered 500', failuresInARow: 4, restingUntil: null })
  await webhooks.recordFailure(endpointId, { at: now + 200, reason: 'answered 429', failuresInARow: 5, restingUntil: now + 30_200 })
  t.same(await webhooks.leaseEndpoints('second', now + 1000, now + 1000 + leaseMs), [], 'not leased elsewhere while its holder renews it')
  t.match(await webhooks.leaseEndpoints('second', now + leaseMs + 1, now + 2 * leaseMs), [{
    id: endpointId, failingSince: now + 100, failuresInARow: 5, restingUntil: now + 30_200,
  }], 'the next holder is told the failures in a row and the rest its holder recorded last')
  t.match(await webhooks.listEndpoints(), [{ lastFailureAt: now + 200, lastFailureReason: 'answered 429' }], 'the last failure is listed as before')

  // A release before the rest was stored records a delivery by clearing failing_since alone,
  // and a failure by its time alone (and failing_since, from then).
  await runAsAnOlderRelease(database, 'UPDATE webhook_endpoints SET failing_since = NULL')
  const lease = async (): Promise<unknown> => webhooks.leaseEndpoints('second', now + leaseMs + 2, now + 2 * leaseMs)
  t.match(await lease(), [{ failingSince: null, failuresInARow: 0, restingUntil: null }], 'a delivery an older release recorded ends them')
  await runAsAnOlderRelease(database, `UPDATE webhook_endpoints SET last_failure_at = ${now + 400}, failing_since = coalesce(failing_since, ${now + 400})`)
  t.match(await lease(), [{ failingSince: now + 400, failuresInARow: 0, restingUntil: null }], 'so does its failure after it: the rest left is stale')
  await webhooks.recordFailure(endpointId, { at: now + 500, reason: 'answered 429', failuresInARow: 1, restingUntil: now + 30_500 })
  t.match(await lease(), [{ failuresInARow: 1, restingUntil: now + 30_500 }], 'a failure this release records is leased again')
  await webhooks.recordSuccess(endpointId)
  t.match(await lease(), [{ failingSince: null, failuresInARow: 0, restingUntil: null }], 'a delivery clears them')
})

testOnEveryBackend(t, 'a stopping holder extends the leases it holds, and takes no other', async (t, database) => {
  const { webhooks } = await openTestStore(t, database)
  const [held, free, otherHolders] = ['1', '2', '3'].map((last) => endpointId.slice(0, -1) + last) as [string, string, string]
  await webhooks.createEndpoint({ id: held, url: 'http://127.0.0.1:1/held', events: null, secret: 'whsec_x', createdAt: now })
  t.match(await webhooks.leaseEndpoints('stopping', now, now + leaseMs), [{ id: held }])
  await webhooks.createEndpoint({ id: otherHolders, url: 'http://127.0.0.1:1/other', events: null, secret: 'whsec_x', createdAt: now })
  t.match(await webhooks.leaseEndpoints('other', now, now + leaseMs), [{ id: otherHolders }])
  await webhooks.createEndpoint({ id: free, url: 'http://127.0.0.1:1/free', events: null, secret: 'whsec_x', createdAt: now })

  t.same(await webhooks.extendLeases('stopping', now + 3 * leaseMs), [held], 'the extension answers the lease it extended')
  const later = now + leaseMs + 1
  const leased = await webhooks.leaseEndpoints('next', later, later + leaseMs)
  t.same(leased.map(({ id }) => id).sort(), [free, otherHolders],
    "past the first lease, another instance takes the endpoint no one holds and the other holder's lapsed one, not the extended one")
  t.same(await webhooks.leaseEndpoints('next', now + 3 * leaseMs + 1, now + 4 * leaseMs).then((all) => all.map(({ id }) => id).sort()), [held, free, otherHolders].sort(),
    'and the extended one once its extension lapses')
  t.same(await webhooks.extendLeases('stopping', now + 5 * leaseMs), [], 'once taken over, no lease is extended, and none answered')
  const third = await webhooks.leaseEndpoints('third', now + 4 * leaseMs + 1, now + 5 * leaseMs)
  t.same(third.map(({ id }) => id).sort(), [held, free, otherHolders].sort(), 'and every lease lapses when its holder stops renewing it')
})
