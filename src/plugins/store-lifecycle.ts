import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { ApiTokenStore } from '../store/api-token-store.js'
import type { PlantStore } from '../store/plant-store.js'

declare module 'fastify' {
  interface FastifyInstance {
    apiTokens: ApiTokenStore
    plantStore: PlantStore
    // Answers say `Connection: close` from now on (src/http/connection-guard.ts; set in src/app.ts).
    beginShutdown: () => void
  }
}

export interface PlantStoreOptions {
  readonly store: PlantStore
}

// The store is handed to the handlers by their factory; this plugin ties its life to the
// app's: it closes after the server has stopped taking requests and the in-flight ones have
// finished.
async function plantStore (app: FastifyInstance, { store }: PlantStoreOptions): Promise<void> {
  // For src/server.ts, which provisions the first managed token and says at start which store
  // it uses and what its migrations did.
  app.decorate('apiTokens', store.apiTokens)
  app.decorate('plantStore', store)
  // A database that is not reachable yet does not stop start-up (requests get a 503 until it
  // is), but the operator is told at once rather than at the first failed request.
  app.addHook('onReady', async () => {
    await store.checkReady().catch((error: unknown) => {
      app.log.warn({ err: error }, 'the store is not ready yet: requests get 503 until it is')
    })
  })
  app.addHook('onClose', async () => store.close())
}

export default fp(plantStore, { name: 'plant-store', fastify: '5.x' })
