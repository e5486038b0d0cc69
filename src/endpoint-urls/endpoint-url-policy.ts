import { lookup } from 'node:dns/promises'
import { isIP, type LookupFunction } from 'node:net'
import { unreachable } from '../errors/unreachable.js'
import { isLoopback, loopbackRange, nonPublicKind } from './public-address.js'

export interface ResolvedAddress {
  readonly address: string
  readonly family: number
}

// Every address a host name resolves to (the system resolver by default; tests bring their own,
// so that no name is ever resolved or connected to outside this machine).
export type ResolveHost = (hostname: string) => Promise<readonly ResolvedAddress[]>

export const systemResolver: ResolveHost = async (hostname) => lookup(hostname, { all: true, verbatim: true })

export class RefusedUrlError extends Error {}

// `localhost` and the names under it are this machine's (RFC 6761): for development, an
// http:// endpoint may be named so, as well as by a loopback address. A connection still checks
// what the name resolves to.
function isLocalhostName (host: string): boolean {
  return /^(?:.+\.)?localhost\.?$/i.test(host)
}

// The URL's host, an IPv6 literal without its brackets.
export function hostOf (url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1')
}

// A URL that names its host right after `//`.
const withAuthority = /^https?:\/\/[^/\\]/i

// Where a webhook may be sent: `https://` on a host whose every address is public. With
// WEBHOOK_ALLOW_LOOPBACK=true, the loopback addresses too, over http:// as well, for development;
// with `only`, nothing but loopback address literals, and no name is ever resolved (tests,
// which must not reach beyond this machine, even to ask a DNS server).
// A registration is refused only for what the URL itself shows (its form, and an address literal
// that is not public), as openapi.yaml's pattern for it says: a name is not resolved then, so
// that registering does not depend on DNS being up. Each connection checks the addresses the
// name then resolves to, and goes to one it checked, so that a name that resolves to a private
// address, at any time (DNS rebinding), is never connected to; the delivery fails, and the
// endpoint's lastFailure says why.
export type LoopbackPolicy = 'false' | 'true' | 'only'

// What each setting allows of the loopback addresses: whether they may be sent to, and whether
// nothing else may.
function loopbackRules (policy: LoopbackPolicy): { readonly allowed: boolean, readonly only: boolean } {
  switch (policy) {
    case 'false': return { allowed: false, only: false }
    case 'true': return { allowed: true, only: false }
    case 'only': return { allowed: true, only: true }
    default: return unreachable(policy)
  }
}

export class EndpointUrlPolicy {
  private readonly allowLoopback: boolean
  private readonly loopbackOnly: boolean

  constructor (loopback: LoopbackPolicy, private readonly resolve: ResolveHost = systemResolver) {
    const rules = loopbackRules(loopback)
    this.allowLoopback = rules.allowed
    this.loopbackOnly = rules.only
  }

  // The URL, or a RefusedUrlError that says why not. Nothing is resolved.
  check (text: string): URL {
    let url: URL
    try {
      url = new URL(text)
    } catch {
      throw new RefusedUrlError('it is not an absolute URL')
    }
    // `https:8.8.8.8/h`, `https:///8.8.8.8/h` and `https://\\8.8.8.8/h` parse as that host (WHATWG
    // URL), though as a URI (RFC 3986) they have none: the URL must say its host the one way both
    // read alike.
    if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !withAuthority.test(text)) throw new RefusedUrlError('it must be an https:// URL')
    if (url.username !== '' || url.password !== '') throw new RefusedUrlError('it must not hold credentials')
    if (text.includes('#')) throw new RefusedUrlError('it must not have a fragment')
    // Port 0 asks the system for any free port when listening: no server can be reached at it.
    if (url.port === '0') throw new RefusedUrlError('port 0 cannot be connected to')
    const host = hostOf(url)
    const literal = isIP(host) !== 0
    this.checkLoopbackOnly(host, literal)
    if (literal) this.checkAddress(host, host)
    if (url.protocol === 'http:' && !(this.allowLoopback && (literal ? isLoopback(host) : isLocalhostName(host)))) {
      throw new RefusedUrlError('it must be an https:// URL')
    }
    return url
  }

  // The addresses a connection to the URL may go to, each checked; for a name, resolved now.
  // Used by connections only: a registration resolves nothing.
  async addressesOf (url: URL): Promise<readonly ResolvedAddress[]> {
    const host = hostOf(url)
    const family = isIP(host)
    this.checkLoopbackOnly(host, family !== 0)
    const addresses = family !== 0 ? [{ address: host, family }] : await this.resolved(host)
    for (const { address } of addresses) this.checkAddress(host, address)
    return addresses
  }

  // For the connections of deliveries: resolves the name and connects to an address just
  // checked, or fails the connection. (An IP literal never reaches a lookup: addressesOf checks it.)
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    this.addressesOf(new URL(`https://${hostname.includes(':') ? `[${hostname}]` : hostname}/`)).then((addresses) => {
      const first = addresses[0]!
      if (options.all === true) callback(null, addresses.map(({ address, family }) => ({ address, family })))
      else callback(null, first.address, first.family)
    }, (error: unknown) => { callback(error as NodeJS.ErrnoException, '', 0) })
  }

  private async resolved (host: string): Promise<readonly ResolvedAddress[]> {
    let addresses: readonly ResolvedAddress[]
    try {
      addresses = await this.resolve(host)
    } catch {
      addresses = []
    }
    if (addresses.length === 0) throw new RefusedUrlError(`its host ${host} cannot be resolved`)
    return addresses
  }

  // With WEBHOOK_ALLOW_LOOPBACK=only, a registration and a connection alike refuse every host but
  // a loopback address literal, before any name is resolved.
  private checkLoopbackOnly (host: string, literal: boolean): void {
    if (this.loopbackOnly && !(literal && isLoopback(host))) {
      throw new RefusedUrlError(`its host ${host} is not a loopback address, the only ones allowed here (WEBHOOK_ALLOW_LOOPBACK=only)`)
    }
  }

  private checkAddress (host: string, address: string): void {
    const kind = nonPublicKind(address)
    if (kind === undefined || (this.allowLoopback && kind === loopbackRange)) return
    const resolvedTo = host === address ? '' : ` resolves to ${address}, which`
    // A developer registering a receiver on this machine is told the setting that allows it.
    const howToAllow = kind === loopbackRange ? ' (WEBHOOK_ALLOW_LOOPBACK=true allows loopback endpoints, over http:// too, for development)' : ''
    throw new RefusedUrlError(`its host ${host}${resolvedTo} is ${kind}${howToAllow}`)
  }
}
