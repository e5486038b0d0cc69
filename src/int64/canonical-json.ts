import { readInt64 } from './read-int64.js'
import { parseJsonExactly } from '../json/parse-json-exactly.js'

// One text per JSON value, so that two documents are equal exactly when their texts are: object
// keys in code-unit order, no whitespace, strings as JSON.stringify writes them, an integer that
// is an int64 in its exact digits (read from the text it was sent as, see src/int64/), any other
// number as the double it reads as ("1.50" and "1.5" are one number, "1.0" and "1" too).
export function canonicalJson (value: unknown): string {
  return writeMember({ value }, 'value')
}

// The value held at container[key], written canonically; the container is where an exact
// number's text is found.
export function writeMember (container: object, key: string | number): string {
  const value: unknown = (container as Record<string | number, unknown>)[key]
  if (typeof value === 'number' || typeof value === 'bigint') return writeNumber(container, key, value)
  if (Array.isArray(value)) return `[${value.map((_, index) => writeMember(value, index)).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value).sort()
    return `{${keys.map((name) => `${JSON.stringify(name)}:${writeMember(value, name)}`).join(',')}}`
  }
  return JSON.stringify(value)
}

function writeNumber (container: object, key: string | number, value: number | bigint): string {
  const int64 = readInt64(container, key)
  if (typeof int64 === 'bigint' || typeof value === 'bigint') return String(typeof int64 === 'bigint' ? int64 : value)
  return JSON.stringify(value)
}

// Whether a stored document holds the same value as a canonical one. Stored text that another
// writer produced (PostgreSQL's jsonb, a migration's SQL) is read back and written canonically.
export function isSameJson (storedText: string, canonicalText: string): boolean {
  return storedText === canonicalText || canonicalJson(parseJsonExactly(storedText)) === canonicalText
}
