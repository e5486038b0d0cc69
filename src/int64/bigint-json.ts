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

// JSON.parse, but an integer beyond 2^53 becomes the bigint of its digits rather than the
// nearest double: each such number is first quoted with a marker (random and new for every
// call, as above), outside the text's strings, and the reviver turns it back into digits.
export function parseWithBigInts (text: string): unknown {
  const marker = `bigint:${Array.from(crypto.getRandomValues(new Uint32Array(4)), (part) => part.toString(36)).join('')}:`
  let marked = ''
  let copiedUpTo = 0
  for (let index = 0; index < text.length; index++) {
    const character = text[index]!
    if (character === '"') {
      // Past the string, escapes included.
      while (++index < text.length && text[index] !== '"') if (text[index] === '\\') index++
    } else if (character === '-' || (character >= '0' && character <= '9')) {
      const end = numberEnd(text, index)
      const number = text.slice(index, end)
      if (/^-?\d+$/.test(number) && !Number.isSafeInteger(Number(number))) {
        marked += `${text.slice(copiedUpTo, index)}"${marker}${number}"`
        copiedUpTo = end
      }
      index = end - 1
    }
  }
  return JSON.parse(marked + text.slice(copiedUpTo), (_key, value: unknown) =>
    typeof value === 'string' && value.startsWith(marker) ? BigInt(value.slice(marker.length)) : value)
}

function numberEnd (text: string, start: number): number {
  let end = start + 1
  while (end < text.length && /[0-9.eE+-]/.test(text[end]!)) end++
  return end
}
