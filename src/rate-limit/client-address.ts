const ipv4Mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i

// The key a client address is counted under. An IPv4 address is itself. An IPv6 address is its
// /64: one host, or one customer of a provider, usually holds a whole /64, and could otherwise
// take a new address for every request. An IPv4 address written as IPv6 (::ffff:a.b.c.d, as a
// socket listening on :: reports IPv4 clients) is the IPv4 address, not the /64 all of them share.
export function addressKey (address: string): string {
  if (!address.includes(':')) return address
  const mapped = ipv4Mapped.exec(address)
  if (mapped?.[1] !== undefined) return mapped[1]
  return `${ipv6Groups(address).slice(0, 4).join(':')}::/64`
}

// The eight groups of an IPv6 address as Node writes a socket's (no zone index expected, but one
// is dropped), each in lowercase hexadecimal without leading zeros. A dotted IPv4 tail stands
// for the last two groups, which the /64 never reaches.
function ipv6Groups (address: string): string[] {
  const [withoutZone = ''] = address.split('%')
  const [head = '', tail] = withoutZone.split('::')
  const headGroups = head === '' ? [] : head.split(':')
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':')
  const tailWidth = tailGroups.length + (tailGroups.at(-1)?.includes('.') === true ? 1 : 0)
  const zeros = Array<string>(Math.max(0, 8 - headGroups.length - tailWidth)).fill('0')
  return [...headGroups, ...zeros, ...tailGroups].map((group) =>
    group.includes('.') ? group : Number.parseInt(group, 16).toString(16))
}
