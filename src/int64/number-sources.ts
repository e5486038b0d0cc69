// The text of each number a double may not hold exactly, kept beside the object or array that
// holds the number, for as long as that object lives.
const numberSources = new WeakMap<object, Map<string, string>>()

// Up to 15 digits and nothing else: every such integer is a double exactly.
const exactDoublePattern = /^-?\d{1,15}$/

export function rememberNumberSource (container: object, key: string, source: string): void {
  if (exactDoublePattern.test(source)) return
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
