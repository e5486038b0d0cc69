import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { PlantStore } from '../store/plant-store.js'

declare module 'fastify' {
  interface FastifyInstance {
    plantStore: PlantStore
  }
}

export interface PlantStoreOptions {
  readonly store: PlantStore
}

// The store is opened by whoever builds the app and closed with it, after the server has
// stopped taking requests and the in-flight ones have finished.
async function plantStore (app: FastifyInstance, { store }: PlantStoreOptions): Promise<void> {
  app.decorate('plantStore', store)
  app.addHook('onClose', async () => store.close())
}

export default fp(plantStore, { name: 'plant-store', fastify: '5.x' })
