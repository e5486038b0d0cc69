import { createHmac, randomBytes } from 'node:crypto'

const secretPrefix = 'whsec_'

// A new signing secret, as Standard Webhooks writes one: `whsec_` and the base64 of 32 random
// bytes (the standard allows 24 to 64).
export function newSigningSecret (): string {
  return secretPrefix + randomBytes(32).toString('base64')
}

// The key a secret stands for: the bytes after `whsec_`.
export function signingKeyOf (secret: string): Buffer {
  return Buffer.from(secret.slice(secretPrefix.length), 'base64')
}

// The webhook-signature header of Standard Webhooks v1: `v1,` and the base64 HMAC-SHA256 of
// "{id}.{timestamp}.{body}" with each key, space-separated.
export function signatureHeader (keys: readonly Buffer[], messageId: string, timestamp: number, body: string): string {
  const signed = `${messageId}.${timestamp}.${body}`
  return keys.map((key) => `v1,${createHmac('sha256', key).update(signed).digest('base64')}`).join(' ')
}
