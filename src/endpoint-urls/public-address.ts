import { BlockList, isIP } from 'node:net'

// Whether a webhook may be sent to an address, from IANA's special-purpose address registries
// (RFC 6890 and its updates). IPv4 is refused by range, each range named for the message that
// refuses it. IPv6 is allowed only inside global unicast (2000::/3), less its special ranges:
// anything else (the unspecified and IPv4-compatible ::/96, local-use NAT64, discard-only,
// whatever IANA has not yet assigned) is refused, so that a range this list does not name is
// refused rather than reached.
type Subnet = readonly [network: string, prefix: number]

// The loopback range's name, which the endpoints' policy allows for development.
export const loopbackRange = 'a loopback address'
const notPublic = 'not a public address'

const ipv4Ranges: ReadonlyArray<readonly [string, readonly Subnet[]]> = [
  [loopbackRange, [['127.0.0.0', 8]]],
  ['a private address', [['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16]]],
  ['a link-local address', [['169.254.0.0', 16]]],
  ['a shared (CGNAT) address', [['100.64.0.0', 10]]],
  ['a multicast address', [['224.0.0.0', 4]]],
  [notPublic, [
    ['0.0.0.0', 8], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24],
    ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['240.0.0.0', 4],
  ]],
]

// Outside global unicast: named where the name helps whoever reads the refusal.
const ipv6NamedRanges: ReadonlyArray<readonly [string, readonly Subnet[]]> = [
  [loopbackRange, [['::1', 128]]],
  ['a link-local address', [['fe80::', 10]]],
  ['a multicast address', [['ff00::', 8]]],
  ['a unique-local address', [['fc00::', 7], ['fec0::', 10]]],
]

const globalUnicast = blockListOf([['2000::', 3]], 'ipv6')
// Inside global unicast, but not public: IETF protocol assignments (Teredo among them, which
// hides an IPv4 address), and the two documentation ranges (RFC 3849, RFC 9637).
const notPublicInGlobalUnicast = blockListOf([['2001::', 23], ['2001:db8::', 32], ['3fff::', 20]], 'ipv6')

const ipv4Lists = ipv4Ranges.map(([name, subnets]) => [name, blockListOf(subnets, 'ipv4')] as const)
const ipv6Lists = ipv6NamedRanges.map(([name, subnets]) => [name, blockListOf(subnets, 'ipv6')] as const)

function blockListOf (subnets: readonly Subnet[], family: 'ipv4' | 'ipv6'): BlockList {
  const list = new BlockList()
  for (const [network, prefix] of subnets) list.addSubnet(network, prefix, family)
  return list
}

// An IPv6 address that stands for an IPv4 one. Mapped (::ffff:a.b.c.d): a socket on this machine
// connects to the IPv4 address itself. NAT64 (64:ff9b::/96) and 6to4 (2002::/16): a translator or
// relay elsewhere reaches it, so such an address is public when its IPv4 address is, and is never
// this machine's loopback, whatever it embeds.
interface Embedded {
  readonly ipv4: string
  readonly reachedHere: boolean
}

function embeddedIpv4 (address: string): Embedded | undefined {
  const groups = ipv6Groups(address)
  if (groups === undefined) return undefined
  const fromGroups = (high: number, low: number): string => [high >> 8, high & 255, low >> 8, low & 255].join('.')
  const zeros = (from: number, to: number): boolean => groups.slice(from, to).every((group) => group === 0)
  if (zeros(0, 5) && groups[5] === 0xffff) return { ipv4: fromGroups(groups[6]!, groups[7]!), reachedHere: true }
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return { ipv4: fromGroups(groups[6]!, groups[7]!), reachedHere: false }
  if (groups[0] === 0x2002) return { ipv4: fromGroups(groups[1]!, groups[2]!), reachedHere: false }
  return undefined
}

// The eight groups of an IPv6 address that isIP accepts (one ending in dotted IPv4 included).
function ipv6Groups (address: string): number[] | undefined {
  let text = address.toLowerCase()
  const dotted = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(2).map(Number) as [number, number, number, number]
    text = `${dotted[1]!}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head = '', tail] = text.split('::')
  const headGroups = head === '' ? [] : head.split(':')
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':')
  const missing = 8 - headGroups.length - tailGroups.length
  if (tail === undefined && missing !== 0) return undefined
  return [...headGroups, ...Array<string>(Math.max(missing, 0)).fill('0'), ...tailGroups].map((group) => parseInt(group, 16))
}

// What keeps the address from being public ("a private address"), or undefined when it is one.
export function nonPublicKind (address: string): string | undefined {
  const family = isIP(address)
  if (family === 0) return 'not an IP address'
  // A zone (fe80::1%eth0) names an interface of this machine: no URL or name resolves to one.
  if (address.includes('%')) return notPublic
  if (family === 4) return ipv4Lists.find(([, list]) => list.check(address, 'ipv4'))?.[0]
  const embedded = embeddedIpv4(address)
  if (embedded !== undefined) {
    const kind = nonPublicKind(embedded.ipv4)
    if (kind === undefined || embedded.reachedHere) return kind
    return `${notPublic} (it stands for ${embedded.ipv4}, which is ${kind})`
  }
  const named = ipv6Lists.find(([, list]) => list.check(address, 'ipv6'))?.[0]
  if (named !== undefined) return named
  if (!globalUnicast.check(address, 'ipv6') || notPublicInGlobalUnicast.check(address, 'ipv6')) return notPublic
  return undefined
}

// This machine's loopback: 127.0.0.0/8, ::1, and 127.0.0.0/8 mapped into IPv6.
export function isLoopback (address: string): boolean {
  return nonPublicKind(address) === loopbackRange
}
