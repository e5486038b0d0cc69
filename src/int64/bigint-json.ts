// JSON.stringify cannot write a bigint: each is written as a string holding a marker that no
// other string can contain (it is random and new for every call), and the quoted marker then
// gives way to the bare digits. The replacer reads the holder's own value, before any toJSON
// (a BigInt.prototype.toJSON polyfill would otherwise turn it into a string). An integer number
// beyond 2^53 is refused, as its digits may not be the ones the caller meant.
export function stringifyWithBigInts (value: unknown): string {
  const marker = `bigint:${Array.from(crypto.getRandomValues(new Uint32Array(4)), (part) => part.toString(36)).join('')}:`
  const json = JSON.stringify(value, function (this: Record<string, unknown>, key: string, member: unknown) {
    const own = this[key]
    if (typeof own === 'bigint') return `${marker}${own}`
    if (typeof member === 'number' && Number.isInteger(member) && !Number.isSafeInteger(member)) {
      throw new RangeError(`${key} is ${member}, beyond 2^53 where a number no longer holds every integer: pass it as a bigint`)
    }
    return member
  })
  return json.replaceAll(new RegExp(`"${marker}(-?\\d+)"`, 'g'), '$1')
}
