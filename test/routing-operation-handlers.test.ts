import t from 'tap'
import { createOperationHandlers } from '../src/handlers/operation-handlers.js'
import { listOperations, loadOpenApiDocument } from '../src/openapi/openapi-document.js'
import { SqlitePlantStore } from '../src/store/sqlite/sqlite-plant-store.js'
import { StoreUnavailableError } from '../src/store/store-errors.js'
import { Webhooks } from '../src/webhooks/webhooks.js'
import { Observability } from '../src/observability/observability.js'
import { loadConfig } from '../src/config/config.js'
import { buildTestApp } from './support/helper.js'
import { createInStore, plantRow } from './support/plant-rows.js'
import { testFolder } from './support/test-folder.js'

// Each operationId of openapi.yaml is routed to a handler of the same name: none is missing,
// none is extra, and an operation with no handler stops buildApp.

t.test('every operationId of openapi.yaml has a handler, and every handler an operation', async (t) => {
  const store = await SqlitePlantStore.open({ filename: `${testFolder(t)}/plants.db` })
  t.teardown(() => store.close())
  const openApi = loadOpenApiDocument()
  const observability = await Observability.create({ ...loadConfig({}), METRICS: 'off' })
  const webhooks = new Webhooks({ document: openApi.document, store, settings: loadConfig({}), observability, logger: console })
  const handlers: Record<string, unknown> = createOperationHandlers({
    store, openApi, metrics: undefined, webhooks, traceparent: () => undefined,
  })

  const operationIds = listOperations(openApi.document).map(({ operation }) => operation.operationId)
  t.ok(operationIds.length > 0, 'the spec declares operations')
  for (const operationId of operationIds) {
    if (operationId === undefined) {
      t.fail('an operation has no operationId')
      continue
    }
    t.ok(Object.hasOwn(handlers, operationId), `${operationId} has a handler`)
    t.type(handlers[operationId], 'function', `${operationId}'s handler is a function`)
  }
  t.strictSame(Object.keys(handlers).sort(), [...operationIds].sort(), 'no handler without an operation')
})

t.test('buildApp refuses to start when the spec declares an operation with no handler, and closes its store', async (t) => {
  const { document } = loadOpenApiDocument()
  const modified = structuredClone(document)
  ;(modified.paths as Record<string, unknown>)['/extra'] = {
    get: { operationId: 'getExtra', security: [], responses: { 200: { description: 'x' } } },
  }
  const store = await SqlitePlantStore.open({ filename: `${testFolder(t)}/plants.db` })
  await t.rejects(buildTestApp(t, {}, { store, openApi: { document: modified, yamlText: '' } }), {
    message: /no handler: .*getExtra/,
  })
  await t.rejects(createInStore(store, plantRow({ id: 1n, name: 'Fern' })), StoreUnavailableError, 'the store it was given is closed again')
})
