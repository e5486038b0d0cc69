import { fstatSync, statSync, writeFileSync } from 'node:fs'
import { setTimeout } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { LogSync, type SyncFile } from '../../src/store/sqlite/log-sync.js'
import { Database } from '../../src/store/sqlite/sqlite-driver.js'
import { SqlitePlantStore } from '../../src/store/sqlite/sqlite-plant-store.js'
import { StoreUnavailableError } from '../../src/store/store-errors.js'
import { beforeEveryMessage } from '../../src/store/webhook-store.js'
import { plantRow } from '../support/plant-rows.js'
import { testFolder } from '../support/test-folder.js'

// SQLite's commits append to the log without waiting for the disk; what is answered, or sent to a
// webhook endpoint, waits for an fsync of the log begun after it was committed, run off the
// request thread (src/store/sqlite/log-sync.ts).

// An fsync the test holds until it lets it go, counting those begun.
function heldSync (): { syncFile: SyncFile, begun: () => number, release: () => void, fail: (error: Error) => void } {
  let begun = 0
  let waiting: Array<{ resolve: () => void, reject: (error: Error) => void }> = []
  return {
    syncFile: async () => {
      begun += 1
      await new Promise<void>((resolve, reject) => { waiting.push({ resolve, reject }) })
    },
    begun: () => begun,
    release: () => { const released = waiting; waiting = []; released.forEach(({ resolve }) => resolve()) },
    fail: (error) => { const failed = waiting; waiting = []; failed.forEach(({ reject }) => reject(error)) },
  }
}

function settled (promise: Promise<unknown>): { readonly done: boolean } {
  const state = { done: false }
  promise.then(() => { state.done = true }, () => { state.done = true })
  return state
}

async function logSyncOnFile (t: Test, syncFile: SyncFile, commitsElsewhere: () => unknown = () => 0): Promise<LogSync> {
  const filename = `${testFolder(t)}/plants.db-wal`
  writeFileSync(filename, '')
  const logSync = await LogSync.open(filename, commitsElsewhere, syncFile)
  t.teardown(() => logSync.close())
  return logSync
}

t.test('calls made while an fsync runs share the next one, begun once it ends', async (t) => {
  const sync = heldSync()
  const logSync = await logSyncOnFile(t, sync.syncFile)
  const first = settled(logSync.durable())
  t.equal(sync.begun(), 1, 'the first call begins an fsync at once')
  const later = [logSync.durable(), logSync.durable(), logSync.durable()]
  const laterState = later.map(settled)
  await setTimeout(10)
  t.equal(sync.begun(), 1, 'no second fsync while the first runs')
  sync.release()
  await setTimeout(10)
  t.ok(first.done, 'the first call is answered by the first fsync')
  t.notOk(laterState.some((state) => state.done), 'calls made during it wait: it may have begun before their commits')
  t.equal(sync.begun(), 2, 'one more fsync serves all three')
  sync.release()
  await Promise.all(later)
})

t.test('a message waits for the sync that covers the commits asked for, and for a new one after a commit elsewhere', async (t) => {
  const sync = heldSync()
  let elsewhere = 0
  const logSync = await logSyncOnFile(t, sync.syncFile, () => elsewhere)
  await t.resolves(logSync.committedDurable(), 'nothing committed: at once')
  t.equal(sync.begun(), 0, 'without a sync')

  const batch = logSync.durable()
  const message = settled(logSync.committedDurable())
  await setTimeout(10)
  t.equal(sync.begun(), 1, 'the running sync covers the batch: no other begins')
  t.notOk(message.done, 'the message waits for it')
  sync.release()
  await batch
  await setTimeout(5)
  t.ok(message.done, 'and goes with it')
  await t.resolves(logSync.committedDurable(), 'once synced, at once')
  t.equal(sync.begun(), 1)

  const first = logSync.durable()
  const second = logSync.durable()
  const afterSecond = settled(logSync.committedDurable())
  sync.release()
  await first
  await setTimeout(5)
  t.notOk(afterSecond.done, 'a commit asked for while a sync ran waits for the next')
  sync.release()
  await second
  await setTimeout(5)
  t.ok(afterSecond.done)

  elsewhere = 1
  const afterElsewhere = settled(logSync.committedDurable())
  await setTimeout(5)
  t.equal(sync.begun(), 4, 'another connection committed: a new sync')
  t.notOk(afterElsewhere.done)
  sync.release()
  await setTimeout(5)
  t.ok(afterElsewhere.done)
  await t.resolves(logSync.committedDurable(), 'that commit synced: at once')
  t.equal(sync.begun(), 4)
})

t.test('a failed fsync fails its callers, those waiting for the next, and every later one', async (t) => {
  const sync = heldSync()
  const logSync = await logSyncOnFile(t, sync.syncFile)
  const failing = logSync.durable()
  const waitingForNext = logSync.durable()
  sync.fail(Object.assign(new Error('EIO'), { code: 'EIO' }))
  await t.rejects(failing, StoreUnavailableError)
  await t.rejects(waitingForNext, StoreUnavailableError, 'a later fsync could succeed without the pages the failed one lost')
  await t.rejects(logSync.durable(), StoreUnavailableError, 'and so could every one after')
  t.equal(sync.begun(), 1, 'none is tried again')
  t.throws(() => { logSync.checkHealthy() }, StoreUnavailableError)
})

t.test('close waits for the syncs asked for, the one queued behind the running one included', async (t) => {
  const sync = heldSync()
  const logSync = await logSyncOnFile(t, sync.syncFile)
  const first = logSync.durable()
  const second = logSync.durable()
  const closing = settled(logSync.close())
  await t.rejects(logSync.durable(), StoreUnavailableError, 'closing, it takes no more')
  sync.release()
  await first
  await setTimeout(5)
  t.notOk(closing.done, 'the queued sync still runs')
  sync.release()
  await second
  await setTimeout(5)
  t.ok(closing.done)
})

t.test('the real fsync of a file resolves; after close, a call is refused', async (t) => {
  const filename = `${testFolder(t)}/plants.db-wal`
  writeFileSync(filename, 'frames')
  const logSync = await LogSync.open(filename, () => 0)
  await t.resolves(logSync.durable())
  await logSync.close()
  await t.rejects(logSync.durable(), StoreUnavailableError)
})

async function storeWithHeldSync (t: Test): Promise<{ store: SqlitePlantStore, sync: ReturnType<typeof heldSync>, filename: string }> {
  const sync = heldSync()
  const filename = `${testFolder(t)}/plants.db`
  const store = await SqlitePlantStore.open({ filename, syncFile: sync.syncFile })
  t.teardown(async () => {
    sync.release()
    const closing = store.close()
    // A sync begun during the close is let go too.
    await setTimeout(5)
    sync.release()
    await closing
  })
  return { store, sync, filename }
}

t.test('the store commits without waiting for the disk, and its writes are answered once the log is synced', async (t) => {
  const { store, sync } = await storeWithHeldSync(t)
  t.equal((store as unknown as { database: Database }).database.pragma('synchronous', { simple: true }), 1n, 'synchronous=NORMAL')

  const create = store.createPlant(plantRow({ id: 7n, name: 'Fern' }))
  const created = settled(create)
  await setTimeout(20)
  t.ok(sync.begun() >= 1, 'an fsync of the log began')
  t.notOk(created.done, 'the create is not answered before the fsync ends')
  t.same(await store.getPlant(7n), plantRow({ id: 7n, name: 'Fern' }), 'committed already: a read sees it')
  sync.release()
  t.same(await create, { plant: plantRow({ id: 7n, name: 'Fern' }), created: true })

  const removal = settled(store.deletePlant(7n))
  await setTimeout(20)
  t.notOk(removal.done, 'a delete waits for the disk too')
  sync.release()
  await setTimeout(5)
  t.ok(removal.done)

  const token = settled(store.apiTokens.create({ name: 'ci', digest: Buffer.alloc(32, 1), createdAt: new Date(), expiresAt: null }))
  const endpoint = settled(store.webhooks.createEndpoint({
    id: '00000000-0000-4000-8000-000000000001', url: 'http://127.0.0.1:1/hook', events: null, secret: 'whsec_x', createdAt: Date.now(),
  }))
  await setTimeout(20)
  t.notOk(token.done, 'a token created waits for the disk')
  t.notOk(endpoint.done, 'an endpoint registered waits for the disk')
  sync.release()
  await setTimeout(5)
  sync.release()
  await setTimeout(5)
  t.ok(token.done && endpoint.done)
})

t.test('what the store syncs is its own live log, and a failed sync leaves it unavailable and not ready', async (t) => {
  const filename = `${testFolder(t)}/plants.db`
  const synced: number[] = []
  let failing = false
  const store = await SqlitePlantStore.open({
    filename,
    syncFile: async (fd) => {
      synced.push(fstatSync(fd).ino)
      if (failing) throw Object.assign(new Error('EIO'), { code: 'EIO' })
    },
  })
  t.teardown(() => store.close())
  await store.createPlant(plantRow({ id: 1n, name: 'Fern' }))
  t.same(new Set(synced), new Set([statSync(`${filename}-wal`).ino]), 'the fsync is of the file\'s -wal')
  failing = true
  await t.rejects(store.createPlant(plantRow({ id: 2n, name: 'Moss' })), StoreUnavailableError, 'a 503')
  t.same(await store.getPlant(2n), plantRow({ id: 2n, name: 'Moss' }), 'its commit stands: a retry is a replay, once restarted')
  failing = false
  await t.rejects(store.createPlant(plantRow({ id: 3n, name: 'Ivy' })), StoreUnavailableError, 'later writes are refused')
  await t.rejects(store.checkReady(), StoreUnavailableError, 'the store is not ready')
})

t.test('a message is handed out for delivery only once the log is synced, when another process committed it', async (t) => {
  const { store, sync, filename } = await storeWithHeldSync(t)
  const endpointId = '00000000-0000-4000-8000-000000000002'
  const registered = store.webhooks.createEndpoint({ id: endpointId, url: 'http://127.0.0.1:1/hook', events: null, secret: 'whsec_x', createdAt: 1 })
  sync.release()
  await registered
  t.same(await store.webhooks.dueMessages(endpointId, 1000, beforeEveryMessage, 10), [], 'none due: nothing to wait for')

  const other = new Database(filename)
  t.teardown(() => other.close())
  other.prepare(`INSERT INTO webhook_messages (endpoint_id, message_id, event, body, committed_at, next_attempt_at)
    VALUES (?, 'msg_1', 'newPlant', '{}', 1, 1)`).run(endpointId)
  const before = sync.begun()
  const due = store.webhooks.dueMessages(endpointId, 1000, beforeEveryMessage, 10)
  const read = settled(due)
  await setTimeout(20)
  t.equal(sync.begun(), before + 1, 'the read began an fsync of the log')
  t.notOk(read.done, 'the message waits for it')
  sync.release()
  t.same((await due).map((message) => message.messageId), ['msg_1'])
})
