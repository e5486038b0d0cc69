import type { FastifyReply } from 'fastify'
import t from 'tap'
import { loadConfig } from '../src/config/config.js'
import { createOperationHandlers, requestKinds } from '../src/handlers/operation-handlers.js'
import { Observability } from '../src/observability/observability.js'
import { loadOpenApiDocument } from '../src/openapi/openapi-document.js'
import { openPlantStore } from '../src/store/open-plant-store.js'
import { Webhooks } from '../src/webhooks/webhooks.js'
import { testOnEveryBackend } from './support/test-databases.js'

// The order of requests pipelined on a connection rests on this (src/request-path.ts, inTurn):
// a write's handler hands its write to the store before its first await, and the store's queue
// takes it inside that call, so that once the handler's call returns the write has its place,
// and the writes behind it may go. Each operation of kind 'write' is called here as the request
// path calls it, and its write must be in the store's queue when the call returns.

// A request each write operation's handler is called with.
const writeRequests: Readonly<Record<string, { readonly body?: unknown, readonly params?: unknown, readonly headers: unknown }>> = {
  createPlant: { body: { id: 7n, name: 'Fern' }, headers: {} },
  updatePlant: { params: { id: 7n }, body: { name: 'Ivy' }, headers: {} },
  deletePlant: { params: { id: 7n }, headers: {} },
}

// What the handlers send through their reply, taken and dropped.
const reply = { type: () => reply, code: () => reply, header: () => reply, send: () => reply } as unknown as FastifyReply

testOnEveryBackend(t, 'every write handler has queued its write when its call returns', async (t, database) => {
  let queued = 0
  const observer = { writeQueued: () => { queued++ }, batchStarted: () => () => undefined }
  const store = await openPlantStore({ DATABASE_URL: database.url, DATABASE_POOL_SIZE: 2, DATABASE_FAILOVER_WAIT: 0 }, { warn: () => undefined }, () => observer)
  t.teardown(() => store.close())
  const openApi = loadOpenApiDocument()
  const observability = await Observability.create({ ...loadConfig({}), METRICS: 'off' })
  const webhooks = new Webhooks({ document: openApi.document, store, settings: loadConfig({}), observability, logger: console })
  const handlers = createOperationHandlers({ store, openApi, metrics: undefined, webhooks, traceparent: () => undefined }) as
    unknown as Record<string, (request: unknown, reply: FastifyReply) => Promise<unknown>>

  const writes = Object.entries(requestKinds).filter(([, kind]) => kind === 'write').map(([operationId]) => operationId)
  t.ok(writes.includes('createPlant') && writes.includes('deletePlant'), 'creates and deletes are writes')
  for (const operationId of writes) {
    const request = writeRequests[operationId]
    if (request === undefined) {
      t.fail(`${operationId} is a write: give it a request here`)
      continue
    }
    const before = queued
    const answered = handlers[operationId]!(request, reply)
    t.equal(queued, before + 1, `${operationId}'s write is queued when its handler's call returns`)
    await answered
  }
})
