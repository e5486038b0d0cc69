import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { PlantStore } from '../store/plant-store.js'

export interface PlantStoreOptions {
  readonly store: PlantStore
}

// The store is handed to the handlers by their factory; this plugin ties its life to the
// app's: it closes after the server has stopped taking requests and the in-flight ones have
// finished.
async function plantStore (app: FastifyInstance, { store }: PlantStoreOptions): Promise<void> {
  app.addHook('onClose', async () => store.close())
}

export default fp(plantStore, { name: 'plant-store', fastify: '5.x' })
