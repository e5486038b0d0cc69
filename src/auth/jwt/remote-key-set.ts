import {
  createRemoteJWKSet, type CryptoKey, customFetch, errors, type FlattenedJWSInput, type JWSHeaderParameters,
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

// The identity provider's keys, fetched from its JWKS URL when a token first needs them, by
// jose's createRemoteJWKSet (the fetch, its timeout, the JWKS's checks, the choice of key). Two
// things are decided here instead, on the service's clock. A kid the keys lack refetches them at
// once if no refetch for an unknown kid came since the last other fetch, and otherwise at most
// every 5 s: jose's cooldown counts from any fetch (30 s by default), so a key published just
// after a fetch would be refused until it ended. And a failed fetch is not tried again for a
// second: jose would try it again for every token, each waiting out the timeout.
//
// One fetch runs at a time, and every caller who needs keys meanwhile waits for it. Keys older
// than keysMaxAgeMs are never used, so a JWKS that cannot be fetched refuses JWTs
// (SigningKeysUnavailableError) rather than trusting keys it may have withdrawn.
export class RemoteKeySet {
  readonly #options: RemoteKeySetOptions
  readonly #keys: ReturnType<typeof createRemoteJWKSet>
  // What the last fetch was answered, to say why jose refused it.
  #lastStatus: number | undefined
  #fetchedAtMs: number | undefined
  #fetching: Promise<void> | undefined
  #failedAtMs = -Infinity
  #lastUnknownKidRefetchAtMs = -Infinity

  constructor (options: RemoteKeySetOptions) {
    this.#options = options
    this.#keys = createRemoteJWKSet(new URL(options.url), {
      timeoutDuration: options.timeoutMs,
      // Both decided above, on the service's clock.
      cacheMaxAge: Number.POSITIVE_INFINITY,
      cooldownDuration: Number.POSITIVE_INFINITY,
      headers: { accept: 'application/jwk-set+json, application/json' },
      [customFetch]: async (url: string, init: RequestInit) => {
        const response = await fetch(url, init)
        this.#lastStatus = response.status
        if (response.status !== 200) await response.body?.cancel()
        return response
      },
    })
  }

  // The key for a token, as jose's jwtVerify asks for it. Throws jose's JWKSNoMatchingKey when
  // no key has the token's kid (and alg), even after a refetch or when none is allowed now.
  readonly getKey = async (header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<CryptoKey> => {
    const fetchedForThisToken = await this.#fetchUnlessFresh()
    try {
      return await this.#keys(header, token)
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey) || fetchedForThisToken || !await this.#refetchForUnknownKid()) throw error
      return await this.#keys(header, token)
    }
  }

  // Fetches the keys if no fresh ones are held; never rejects (a failure has gone to
  // onFetchFailed, and the next token tries again after the backoff).
  async warmUp (): Promise<void> {
    try {
      await this.#fetchUnlessFresh()
    } catch {}
  }

  // True when it fetched.
  async #fetchUnlessFresh (): Promise<boolean> {
    if (this.#fetchedAtMs !== undefined && this.#options.now() - this.#fetchedAtMs < keysMaxAgeMs) return false
    await this.#fetch(false)
    return true
  }

  // False when a refetch is not allowed yet.
  async #refetchForUnknownKid (): Promise<boolean> {
    if (this.#fetching !== undefined) {
      await this.#fetching
      return true
    }
    this.#refuseWhileBackingOff()
    const now = this.#options.now()
    if (now - this.#lastUnknownKidRefetchAtMs < unknownKidRefetchIntervalMs) return false
    this.#lastUnknownKidRefetchAtMs = now
    await this.#fetch(true)
    return true
  }

  #fetch (forUnknownKid: boolean): Promise<void> {
    if (this.#fetching !== undefined) return this.#fetching
    this.#refuseWhileBackingOff()
    const fetching = this.#keys.reload().then(() => {
      this.#fetchedAtMs = this.#options.now()
      if (!forUnknownKid) this.#lastUnknownKidRefetchAtMs = -Infinity
    }, (error: unknown) => {
      this.#failedAtMs = this.#options.now()
      this.#options.onFetchFailed(new JwksFetchError(this.#reasonOf(error), { cause: error }))
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

  // jose's refusal of a fetch, told as what the URL did.
  #reasonOf (error: unknown): string {
    if (error instanceof errors.JWKSTimeout) return `did not answer within ${this.#options.timeoutMs} ms`
    if (error instanceof errors.JWKSInvalid) return 'answered JSON that is not a JWKS (an object with a keys array of keys)'
    if (error instanceof errors.JOSEError) {
      return this.#lastStatus !== undefined && this.#lastStatus !== 200
        ? `answered ${this.#lastStatus}, not 200`
        : 'answered a body that is not JSON'
    }
    // fetch's own message is "fetch failed"; what failed (ECONNREFUSED, a certificate) is its cause.
    const cause = error instanceof Error ? error.cause : undefined
    return `could not be reached (${cause instanceof Error ? cause.message : error instanceof Error ? error.message : String(error)})`
  }
}
