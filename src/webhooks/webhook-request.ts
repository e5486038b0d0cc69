import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { plantWithId } from '../store/plant-row.js'
import type { DueWebhookMessage, LeasedWebhookEndpoint } from '../store/webhook-store.js'
import type { Attempt } from './endpoint-connection.js'

// A new signing secret, as Standard Webhooks writes one (its library makes none): `whsec_` and the
// base64 of 32 random bytes (the standard allows 24 to 64).
export function newSigningSecret (): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

// A message's body, as openapi.yaml declares its webhooks and Standard Webhooks lays them out: the
// webhook's name, the commit's time and the plant with its id (exact beyond 2^53). Composed from
// what the outbox keeps, at each attempt: the same bytes every time, at every endpoint.
export function webhookBody ({ event, committedAt, plant }: Pick<DueWebhookMessage, 'event' | 'committedAt' | 'plant'>): string {
  return `{"type":${JSON.stringify(event)},"timestamp":"${new Date(committedAt).toISOString()}","data":${plantWithId(plant)}}`
}

// What an attempt sends to one endpoint: the message's body signed as Standard Webhooks v1, by its
// library, with each secret that signs now: the endpoint's, and the one before its last rotation
// until previousSecretUntil. A signer is made once per secret, not per attempt: every renewal of
// the lease (every 2 s) hands the same secrets again.
export class EndpointSigners {
  private signers = new Map<string, Webhook>()
  // Why the endpoint's secret cannot sign (the library refuses it; the service writes no such
  // secret), or undefined.
  refusal: string | undefined

  constructor (endpoint: LeasedWebhookEndpoint) {
    this.update(endpoint)
  }

  update (endpoint: LeasedWebhookEndpoint): void {
    const previousSigns = endpoint.previousSecret !== null && (endpoint.previousSecretUntil ?? 0) > Date.now()
    const secrets = previousSigns ? [endpoint.secret, endpoint.previousSecret!] : [endpoint.secret]
    try {
      this.signers = new Map(secrets.map((secret) => [secret, this.signers.get(secret) ?? new Webhook(secret)]))
      this.refusal = undefined
    } catch (error) {
      this.refusal = `its secret cannot sign: ${error instanceof Error ? error.message : String(error)}`
    }
  }

  // The headers and body of an attempt made now: a signature for each secret, space-separated,
  // over the message's id, this attempt's time in seconds and the body.
  request (message: DueWebhookMessage, traceparent: string | undefined): Attempt {
    const sentAt = new Date()
    const body = webhookBody(message)
    const headers: Record<string, string> = {
      'webhook-id': message.messageId,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': [...this.signers.values()].map((signer) => signer.sign(message.messageId, sentAt, body)).join(' '),
    }
    if (traceparent !== undefined) headers.traceparent = traceparent
    return { headers, body }
  }
}
