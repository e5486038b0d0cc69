import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Webhooks } from '../webhooks/webhooks.js'

export interface WebhookDeliveryOptions {
  readonly webhooks: Webhooks
}

// Ties the webhooks' deliveries to the app's life: they start once the app is ready, and stop
// as it begins to close, before the store closes (what is still owed stays in the outbox, for
// this instance's next start or another instance).
async function webhookDelivery (app: FastifyInstance, { webhooks }: WebhookDeliveryOptions): Promise<void> {
  app.addHook('onReady', async () => { webhooks.start() })
  app.addHook('preClose', async () => webhooks.stop())
}

export default fp(webhookDelivery, { name: 'webhook-delivery', fastify: '5.x' })
