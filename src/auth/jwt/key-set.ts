import { readFile } from 'node:fs/promises'
import { createLocalJWKSet, createRemoteJWKSet, customFetch, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose'
import { ConfigError } from '../../config/config.js'
import type { JwtSettings } from '../jwt-settings.js'

// The identity provider's signing keys, as jose's jwtVerify asks for them: read from
// JWT_JWKS_FILE at start-up, or fetched from JWT_JWKS_URL when first needed.
export interface KeySet {
  readonly getKey: JWTVerifyGetKey
  // Fetches JWT_JWKS_URL's keys unless fresh ones are held; never rejects (a failure has gone
  // to onFetchFailed). Nothing to do for JWT_JWKS_FILE.
  readonly warmUp: () => Promise<void>
}

// jose keeps fetched keys this long (cacheMaxAge), and never uses them longer: the next token
// fetches them again, and is refused if that fails, rather than trusting keys the identity
// provider may have withdrawn.
const keysMaxAgeMs = 10 * 60_000
// A kid the keys lack may be a key just published, so jose fetches the keys again for it, unless
// it fetched them less than this ago (cooldownDuration): random kids make at most one fetch per
// this time, and a new key is seen within it.
const unknownKidCooldownMs = 5_000
// After a failed fetch, none for this long, and the tokens that need one are refused at once: a
// dead identity provider is not asked again per request, and no request waits out the timeout
// (the measurement is in docs/credentials.md).
const failedFetchBackoffMs = 1_000

// The keys could not be had: the caller may retry after retryAfterSeconds.
export class SigningKeysUnavailableError extends Error {
  constructor (readonly retryAfterSeconds: number) {
    super('the signing keys could not be fetched')
    this.name = 'SigningKeysUnavailableError'
  }
}

// Why one fetch failed, for the log. It names the setting rather than the URL, which could hold
// a secret in its query.
export class JwksFetchError extends Error {
  constructor (reason: string, options?: ErrorOptions) {
    super(`the JWKS at JWT_JWKS_URL ${reason}`, options)
    this.name = 'JwksFetchError'
  }
}

export async function keySetOf (settings: JwtSettings, onFetchFailed: (error: unknown) => void): Promise<KeySet> {
  if (settings.jwksFile !== undefined) return { getKey: await readKeySetFile(settings.jwksFile), warmUp: async () => {} }
  if (settings.jwksUrl !== undefined) return remoteKeySet(settings.jwksUrl, settings.jwksTimeoutMs, onFetchFailed)
  throw new Error('the JWT settings name neither JWT_JWKS_URL nor JWT_JWKS_FILE')
}

// JWT_JWKS_URL, by jose's createRemoteJWKSet: its cache, its cooldown, one fetch at a time
// shared by every token that waits for it, its timeout, and its choice of key. The fetch it
// makes is this service's (jose's customFetch): an answer that is not a JWKS is refused there,
// so that every failed fetch is told once, as what the URL did, and answered 503 rather than
// taken for the token's fault; and after a failure none is made for a second.
function remoteKeySet (url: string, timeoutMs: number, onFetchFailed: (error: unknown) => void): KeySet {
  let failedAtMs = Number.NEGATIVE_INFINITY
  const fetchKeySet = async (url: string, init: RequestInit): Promise<Response> => {
    const backoffLeftMs = failedAtMs + failedFetchBackoffMs - Date.now()
    if (backoffLeftMs > 0) throw new SigningKeysUnavailableError(Math.ceil(backoffLeftMs / 1000))
    try {
      return new Response(await keySetBodyOf(url, init, timeoutMs))
    } catch (error) {
      failedAtMs = Date.now()
      onFetchFailed(error)
      throw new SigningKeysUnavailableError(failedFetchBackoffMs / 1000)
    }
  }
  const keys = createRemoteJWKSet(new URL(url), {
    timeoutDuration: timeoutMs,
    cacheMaxAge: keysMaxAgeMs,
    cooldownDuration: unknownKidCooldownMs,
    [customFetch]: fetchKeySet,
  })
  return {
    getKey: keys,
    warmUp: async () => {
      if (!keys.fresh) await keys.reload().catch(() => {})
    },
  }
}

// The body of the URL's answer when it is a JWKS; otherwise a JwksFetchError saying what the URL
// did. The JWKS is checked by jose's own reader, which jose runs again on the body.
async function keySetBodyOf (url: string, init: RequestInit, timeoutMs: number): Promise<string> {
  const response = await fetch(url, init).catch((error: unknown) => { throw notAnswered(error, timeoutMs) })
  if (response.status !== 200) {
    await response.body?.cancel()
    throw new JwksFetchError(`answered ${response.status}, not 200`)
  }
  const body = await response.text().catch((error: unknown) => { throw notAnswered(error, timeoutMs) })
  let keySet: unknown
  try {
    keySet = JSON.parse(body)
  } catch (error) {
    throw new JwksFetchError('answered a body that is not JSON', { cause: error })
  }
  try {
    createLocalJWKSet(keySet as JSONWebKeySet)
  } catch (error) {
    throw new JwksFetchError('answered JSON that is not a JWKS (an object with a keys array of keys)', { cause: error })
  }
  return body
}

// fetch's refusal, told as what the URL did.
function notAnswered (error: unknown, timeoutMs: number): JwksFetchError {
  if (error instanceof Error && error.name === 'TimeoutError') return new JwksFetchError(`did not answer within ${timeoutMs} ms`, { cause: error })
  // fetch's own message is "fetch failed"; what failed (ECONNREFUSED, a certificate) is its cause.
  const cause = error instanceof Error ? error.cause : undefined
  const what = cause instanceof Error ? cause.message : error instanceof Error ? error.message : String(error)
  return new JwksFetchError(`could not be reached (${what})`, { cause: error })
}

// JWT_JWKS_FILE is read once, at start-up: a file that is missing or is not a set of public keys
// stops the service there, rather than refusing every JWT once it runs.
async function readKeySetFile (path: string): Promise<JWTVerifyGetKey> {
  const problem = (what: string) => new ConfigError([`JWT_JWKS_FILE=${JSON.stringify(path)} ${what}`])
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw problem(`could not be read (${error instanceof Error ? error.message : String(error)})`)
  }
  let keySet: unknown
  try {
    keySet = JSON.parse(text)
  } catch {
    throw problem('is not JSON')
  }
  if (!isKeySet(keySet)) throw problem('is not a JWKS: expected an object with a keys array of keys')
  // A private key here means the wrong file was named, and that it was copied where it should not be.
  if (keySet.keys.some((key) => 'd' in key)) throw problem('holds a private key: it must hold only the public keys')
  return createLocalJWKSet(keySet)
}

function isKeySet (value: unknown): value is JSONWebKeySet & { keys: Array<Record<string, unknown>> } {
  if (typeof value !== 'object' || value === null || !('keys' in value) || !Array.isArray(value.keys)) return false
  return value.keys.every((key) => typeof key === 'object' && key !== null && !Array.isArray(key))
}
