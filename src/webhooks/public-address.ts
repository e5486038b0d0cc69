import { BlockList, isIP } from 'node:net'

// The address ranges a webhook may never be sent to, each named for the message that refuses
// it (IANA's special-purpose registries, RFC 6890 and its updates). An IPv6 address that embeds
// an IPv4 one (mapped, NAT64, 6to4) is judged by the IPv4 address it reaches.
const ranges: ReadonlyArray<readonly [string, ReadonlyArray<readonly [string, number, 'ipv4' | 'ipv6']>]> = [
  ['a loopback address', [['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']]],
  ['a private address', [['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4']]],
  ['a link-local address', [['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']]],
  ['a shared (CGNAT) address', [['100.64.0.0', 10, 'ipv4']]],
  ['a multicast address', [['224.0.0.0', 4, 'ipv4'], ['ff00::', 8, 'ipv6']]],
  ['a unique-local address', [['fc00::', 7, 'ipv6'], ['fec0::', 10, 'ipv6']]],
  ['not a public address', [
    ['0.0.0.0', 8, 'ipv4'], ['192.0.0.0', 24, 'ipv4'], ['192.0.2.0', 24, 'ipv4'], ['192.88.99.0', 24, 'ipv4'],
    ['198.18.0.0', 15, 'ipv4'], ['198.51.100.0', 24, 'ipv4'], ['203.0.113.0', 24, 'ipv4'], ['240.0.0.0', 4, 'ipv4'],
    ['::', 128, 'ipv6'], ['100::', 64, 'ipv6'], ['2001::', 23, 'ipv6'], ['2001:db8::', 32, 'ipv6'],
  ]],
]

const blockLists = ranges.map(([name, subnets]) => {
  const list = new BlockList()
  for (const [network, prefix, family] of subnets) list.addSubnet(network, prefix, family)
  return [name, list] as const
})

// The IPv4 address an IPv6 one stands for, when it embeds one.
function embeddedIpv4 (address: string): string | undefined {
  const lower = address.toLowerCase()
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower)
  if (dotted !== null) return dotted[1]
  const groups = expandIpv6(lower)
  if (groups === undefined) return undefined
  const fromGroups = (high: number, low: number): string => [high >> 8, high & 255, low >> 8, low & 255].join('.')
  const isMapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff
  const isNat64 = groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0)
  if (isMapped || isNat64) return fromGroups(groups[6]!, groups[7]!)
  if (groups[0] === 0x2002) return fromGroups(groups[1]!, groups[2]!)
  return undefined
}

function expandIpv6 (address: string): number[] | undefined {
  if (address.includes('.')) return undefined
  const [head = '', tail] = address.split('::')
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
  const embedded = family === 6 ? embeddedIpv4(address) : undefined
  if (embedded !== undefined) return nonPublicKind(embedded)
  const type = family === 4 ? 'ipv4' : 'ipv6'
  return blockLists.find(([, list]) => list.check(address, type))?.[0]
}

export function isLoopback (address: string): boolean {
  return nonPublicKind(address) === 'a loopback address'
}
