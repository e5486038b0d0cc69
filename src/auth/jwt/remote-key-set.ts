import {
  createLocalJWKSet, errors, type CryptoKey, type FlattenedJWSInput, type JSONWebKeySet, type JWSHeaderParameters, type LocalJWKSet,
} from 'jose'

// Fetched keys serve for this long; the next token after that fetches them again.
const keysMaxAgeMs = 10 * 60_000
// A kid the keys lack may be a key the identity provider has just published, so it makes the
// keys be fetched again at once; but at most once per this time, so that random kids cannot make
// the service hammer the identity provider.
const unknownKidRefetchIntervalMs = 5_000
// After a failed fetch, a token that needs one is refused at once for this long: a dead identity
// provider is not asked again per request, and no request waits out the timeout.
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

export interface RemoteKeySetOptions {
  readonly url: string
  readonly timeoutMs: number
  // Milliseconds since the epoch; tests pass a clock of their own.
  readonly now: () => number
  // Told of each failed fetch (not of each token refused for it), with a JwksFetchError.
  readonly onFetchFailed: (error: unknown) => void
}

interface FetchedKeys {
  readonly keySet: LocalJWKSet
  readonly fetchedAtMs: number
}

// The identity provider's keys, fetched from its JWKS URL when a token first needs them. jose's
// createRemoteJWKSet refetches on an unknown kid only 30 s after the last fetch, so a key
// published less than 30 s before its first token would be refused for up to 30 s; here the
// interval is counted between refetches for unknown kids, and the first one after any other
// fetch is always allowed.
//
// One fetch runs at a time, and every caller who needs keys meanwhile waits for it. Nothing is
// fetched before the first token (or warmUp), so the service starts while the identity provider
// is down; and keys older than keysMaxAgeMs are never used, so a JWKS that cannot be fetched
// refuses JWTs (SigningKeysUnavailableError) rather than trusting keys it may have withdrawn.
export class RemoteKeySet {
  readonly #options: RemoteKeySetOptions
  #keys: FetchedKeys | undefined
  #fetching: Promise<FetchedKeys> | undefined
  #failedAtMs = -Infinity
  #lastUnknownKidRefetchAtMs = -Infinity

  constructor (options: RemoteKeySetOptions) {
    this.#options = options
  }

  // The key for a token, as jose's jwtVerify asks for it. Throws jose's JWKSNoMatchingKey when
  // no key has the token's kid (and alg), even after a refetch or when none is allowed now.
  readonly getKey = async (header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<CryptoKey> => {
    const { keys, fetchedForThisToken } = await this.#currentKeys()
    try {
      return await keys.keySet(header, token)
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey) || fetchedForThisToken) throw error
      const refetched = await this.#refetchForUnknownKid()
      if (refetched === undefined) throw error
      return await refetched.keySet(header, token)
    }
  }

  // Fetches the keys if no fresh ones are held; never rejects (a failure has gone to
  // onFetchFailed, and the next token tries again after the backoff).
  async warmUp (): Promise<void> {
    try {
      await this.#currentKeys()
    } catch {}
  }

  async #currentKeys (): Promise<{ keys: FetchedKeys, fetchedForThisToken: boolean }> {
    const keys = this.#keys
    if (keys !== undefined && this.#options.now() - keys.fetchedAtMs < keysMaxAgeMs) {
      return { keys, fetchedForThisToken: false }
    }
    return { keys: await this.#fetch(false), fetchedForThisToken: true }
  }

  // undefined when a refetch is not allowed yet.
  async #refetchForUnknownKid (): Promise<FetchedKeys | undefined> {
    if (this.#fetching !== undefined) return await this.#fetching
    this.#refuseWhileBackingOff()
    const now = this.#options.now()
    if (now - this.#lastUnknownKidRefetchAtMs < unknownKidRefetchIntervalMs) return undefined
    this.#lastUnknownKidRefetchAtMs = now
    return await this.#fetch(true)
  }

  #fetch (forUnknownKid: boolean): Promise<FetchedKeys> {
    if (this.#fetching !== undefined) return this.#fetching
    this.#refuseWhileBackingOff()
    const fetching = this.#download().then((keySet) => {
      const keys = { keySet, fetchedAtMs: this.#options.now() }
      this.#keys = keys
      if (!forUnknownKid) this.#lastUnknownKidRefetchAtMs = -Infinity
      return keys
    }, (error: unknown) => {
      this.#failedAtMs = this.#options.now()
      this.#options.onFetchFailed(error)
      throw new SigningKeysUnavailableError(Math.ceil(failedFetchBackoffMs / 1000))
    }).finally(() => {
      this.#fetching = undefined
    })
    this.#fetching = fetching
    return fetching
  }

  #refuseWhileBackingOff (): void {
    const backoffLeftMs = this.#failedAtMs + failedFetchBackoffMs - this.#options.now()
    if (backoffLeftMs > 0) throw new SigningKeysUnavailableError(Math.max(1, Math.ceil(backoffLeftMs / 1000)))
  }

  // Rejects with a JwksFetchError unless the URL answers 200 with a JWKS within the timeout.
  async #download (): Promise<LocalJWKSet> {
    const { url, timeoutMs } = this.#options
    const timedOut = `did not answer within ${timeoutMs} ms`
    let response: Response
    try {
      response = await fetch(url, {
        signal: AbortSignal.timeout(timeoutMs),
        // A redirect could lead off the https:// URL the settings insist on.
        redirect: 'manual',
        headers: { accept: 'application/jwk-set+json, application/json' },
      })
    } catch (error) {
      throw new JwksFetchError(isTimeout(error) ? timedOut : `could not be reached (${reasonOf(error)})`, { cause: error })
    }
    if (response.status !== 200) {
      await response.body?.cancel()
      throw new JwksFetchError(`answered ${response.status}, not 200`)
    }
    let body: unknown
    try {
      body = await response.json()
    } catch (error) {
      throw new JwksFetchError(isTimeout(error) ? timedOut : 'answered a body that is not JSON', { cause: error })
    }
    try {
      return createLocalJWKSet(body as JSONWebKeySet)
    } catch (error) {
      throw new JwksFetchError('answered JSON that is not a JWKS (an object with a keys array of keys)', { cause: error })
    }
  }
}

function isTimeout (error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError'
}

// fetch's own message is "fetch failed"; what failed (ECONNREFUSED, a certificate) is its cause.
function reasonOf (error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined
  if (cause instanceof Error) return cause.message
  return error instanceof Error ? error.message : String(error)
}
