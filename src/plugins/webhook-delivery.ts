import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Webhooks } from '../webhooks/webhooks.js'

export interface WebhookDeliveryOptions {
  readonly webhooks: Webhooks
}

// Ties the webhooks' deliveries to the app's life: they start once the app is ready, start no
// attempt once it begins to close, and stop once the server has closed and its last requests
// are answered, before the store closes (onClose hooks run last registered first). Stopping
// waits for the attempts in flight, which end within WEBHOOK_TIMEOUT: one cut short may have been
// handled by its receiver, and would be sent again after a clean stop. What is still owed stays
// in the outbox, for this instance's next start or another instance.
async function webhookDelivery (app: FastifyInstance, { webhooks }: WebhookDeliveryOptions): Promise<void> {
  app.addHook('onReady', async () => { webhooks.start() })
  app.addHook('preClose', async () => { webhooks.pause() })
  app.addHook('onClose', async () => webhooks.stop())
}

export default fp(webhookDelivery, { name: 'webhook-delivery', fastify: '5.x' })
