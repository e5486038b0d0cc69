import { createHmac, randomBytes } from 'node:crypto'
import { plantWithId } from '../store/plant-row.js'
import type { DueWebhookMessage, LeasedWebhookEndpoint } from '../store/webhook-store.js'
import type { Attempt } from './endpoint-connection.js'

// A new signing secret, as Standard Webhooks writes one (its library makes none): `whsec_` and the
// base64 of 32 random bytes (the standard allows 24 to 64).
export function newSigningSecret (): string {
  return `${secretPrefix}${randomBytes(32).toString('base64')}`
}

const secretPrefix = 'whsec_'
// What a secret signs with: the bytes its base64 after `whsec_` stands for (Standard Webhooks).
const secretBytes = /^whsec_([A-Za-z0-9+/]{32,88}={0,2})$/

// A message's body, as openapi.yaml declares its webhooks and Standard Webhooks lays them out: the
// webhook's name, the commit's time and the plant with its id (exact beyond 2^53). Composed from
// what the outbox keeps, at each attempt: the same bytes every time, at every endpoint.
export function webhookBody ({ event, committedAt, plant }: Pick<DueWebhookMessage, 'event' | 'committedAt' | 'plant'>): string {
  return `{"type":${JSON.stringify(event)},"timestamp":"${new Date(committedAt).toISOString()}","data":${plantWithId(plant)}}`
}

// What an attempt sends to one endpoint: the message's body signed as Standard Webhooks v1 (the
// base64 HMAC-SHA256 of "{id}.{timestamp}.{body}") with each secret that signs now: the
// endpoint's, and the one before its last rotation until previousSecretUntil. Signed with
// node:crypto, not the standardwebhooks library (which receivers and the tests verify with): its
// sign() hashes in JavaScript, 8.2-8.8 µs a signature against 1.5-1.6 µs here for a newPlant
// body (docs/webhooks.md), and every delivery is signed on the thread that answers requests.
// A key is read once per secret, not per attempt: every renewal of the lease (every 2 s) hands
// the same secrets again.
export class EndpointSigners {
  private keys = new Map<string, Buffer>()
  // Why the endpoint's secret cannot sign (not the form the service writes), or undefined.
  refusal: string | undefined

  constructor (endpoint: LeasedWebhookEndpoint) {
    this.update(endpoint)
  }

  update (endpoint: LeasedWebhookEndpoint): void {
    const previousSigns = endpoint.previousSecret !== null && (endpoint.previousSecretUntil ?? 0) > Date.now()
    const secrets = previousSigns ? [endpoint.secret, endpoint.previousSecret!] : [endpoint.secret]
    const unreadable = secrets.find((secret) => !secretBytes.test(secret))
    if (unreadable !== undefined) {
      this.refusal = 'its secret cannot sign: it is not `whsec_` and the base64 of 24 to 64 bytes'
      return
    }
    this.keys = new Map(secrets.map((secret) => [secret, this.keys.get(secret) ?? Buffer.from(secret.slice(secretPrefix.length), 'base64')]))
    this.refusal = undefined
  }

  // The headers and body of an attempt made now: a signature for each secret, space-separated,
  // over the message's id, this attempt's time in seconds and the body.
  request (message: DueWebhookMessage, traceparent: string | undefined): Attempt {
    const sentAt = Math.floor(Date.now() / 1000)
    const body = webhookBody(message)
    const signed = `${message.messageId}.${sentAt}.${body}`
    const headers: Record<string, string> = {
      'webhook-id': message.messageId,
      'webhook-timestamp': String(sentAt),
      'webhook-signature': [...this.keys.values()].map((key) => `v1,${createHmac('sha256', key).update(signed).digest('base64')}`).join(' '),
    }
    if (traceparent !== undefined) headers.traceparent = traceparent
    return { headers, body }
  }
}
