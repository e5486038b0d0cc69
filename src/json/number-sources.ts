// The text of each number a double may not hold exactly, kept beside the object or array that
// holds the number, for as long as that object lives.
const numberSources = new WeakMap<object, Map<string, string>>()

// An integer written with digits alone whose double is a safe integer (magnitude up to 2^53 - 1)
// is that double exactly: its text says nothing more. Most ids drawn at random across 2^52 have
// 16 digits, and keeping their text costs a create a WeakMap entry and a bigint read from text.
const plainIntegerPattern = /^-?\d{1,16}$/

// `value` is the double the reader made of `source`.
export function rememberNumberSource (container: object, key: string, source: string, value: number): void {
  if (Number.isSafeInteger(value) && plainIntegerPattern.test(source)) return
  let sources = numberSources.get(container)
  if (sources === undefined) {
    sources = new Map()
    numberSources.set(container, sources)
  }
  sources.set(key, source)
}

// The number's text as it was sent, or undefined when the parsed number is exact.
export function numberSourceOf (container: object, key: string | number): string | undefined {
  return numberSources.get(container)?.get(String(key))
}
