import type { components, operations } from '../../generated/openapi.js'
import { NotFoundError } from '../errors/api-errors.js'
import type { WebhookEndpointSummary } from '../store/webhook-store.js'
import type { Webhooks } from '../webhooks/webhooks.js'
import { created, noContent, type OperationHandler } from './typed-handler.js'

type WebhookEndpoint = components['schemas']['WebhookEndpoint']

// The endpoint as the spec's WebhookEndpoint: never its secret.
function endpointBody (endpoint: WebhookEndpointSummary): WebhookEndpoint {
  return {
    id: endpoint.id,
    url: endpoint.url,
    ...(endpoint.events === null ? {} : { events: [...endpoint.events] }),
    state: endpoint.disabledAt === null ? 'enabled' : 'disabled',
    ...(endpoint.disabledReason === null ? {} : { disabledReason: endpoint.disabledReason }),
    createdAt: new Date(endpoint.createdAt).toISOString(),
    pendingMessages: endpoint.pendingMessages,
    failedMessages: endpoint.failedMessages,
    ...(endpoint.lastFailureAt === null
      ? {}
      : { lastFailure: { at: new Date(endpoint.lastFailureAt).toISOString(), reason: endpoint.lastFailureReason ?? '' } }),
  }
}

export function listWebhookEndpointsHandler (webhooks: Webhooks): OperationHandler<operations['listWebhookEndpoints']> {
  return async function listWebhookEndpoints () {
    return (await webhooks.list()).map(endpointBody)
  }
}

// The secret is answered this once.
export function createWebhookEndpointHandler (webhooks: Webhooks): OperationHandler<operations['createWebhookEndpoint']> {
  return async function createWebhookEndpoint ({ body }, reply) {
    const { endpoint, secret } = await webhooks.register(body.url, body.events)
    return created(reply, { ...endpointBody(endpoint), secret })
  }
}

// An endpoint's id is a UUID, stored in its lower-case form: its hex digits are read whatever
// their case (RFC 9562), and the `urn:uuid:` form the spec's `format: uuid` admits is the same
// id, on SQLite's text as on PostgreSQL's uuid (which would refuse the URN with an error).
const endpointIdOf = (id: string): string => id.toLowerCase().replace(/^urn:uuid:/, '')

export function deleteWebhookEndpointHandler (webhooks: Webhooks): OperationHandler<operations['deleteWebhookEndpoint']> {
  return async function deleteWebhookEndpoint ({ params: { id } }, reply) {
    if (!await webhooks.delete(endpointIdOf(id))) return new NotFoundError(`no webhook endpoint has id ${id}`)
    return noContent(reply)
  }
}

export function rotateWebhookEndpointSecretHandler (webhooks: Webhooks): OperationHandler<operations['rotateWebhookEndpointSecret']> {
  return async function rotateWebhookEndpointSecret ({ params: { id } }) {
    const rotated = await webhooks.rotateSecret(endpointIdOf(id))
    if (rotated === undefined) return new NotFoundError(`no webhook endpoint has id ${id}`)
    return { secret: rotated.secret, previousSecretExpiresAt: new Date(rotated.previousSecretExpiresAt).toISOString() }
  }
}
