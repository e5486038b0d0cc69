import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Webhooks } from '../webhooks/webhooks.js'

export interface WebhookDeliveryOptions {
  readonly webhooks: Webhooks
}

// Ties the webhooks' deliveries to the app's life: they start once the app is ready, and begin to
// stop as it begins to close: no attempt starts, those in flight end (by their answer, or
// WEBHOOK_TIMEOUT and a fifteenth: one cut short may have been handled by its receiver, and
// would be sent again), what was delivered is recorded, and the endpoints' leases go. That runs
// beside the server's own close (a stalled request does not hold back the record), and the store
// closes only once it is done (onClose hooks run last registered first). What is still owed
// stays in the outbox, for this instance's next start or another instance.
async function webhookDelivery (app: FastifyInstance, { webhooks }: WebhookDeliveryOptions): Promise<void> {
  let stopping: Promise<void> | undefined
  app.addHook('onReady', async () => { webhooks.start() })
  app.addHook('preClose', async () => { stopping = webhooks.stop() })
  app.addHook('onClose', async () => stopping ?? webhooks.stop())
}

export default fp(webhookDelivery, { name: 'webhook-delivery', fastify: '5.x' })
