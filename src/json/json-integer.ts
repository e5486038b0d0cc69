import { numberSourceOf } from './parse-json-exactly.js'

const int64Min = -(2n ** 63n)
const int64Max = 2n ** 63n - 1n
const int64MaxDigits = 19
const jsonNumberParts = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/

// The exact int64 value of a number property of a parsed body, or undefined when the number as
// sent is not an integer in the int64 range. "1.0" and "1e3" are integers, as in JSON Schema.
export function readInt64 (container: object, key: string): bigint | undefined {
  const value: unknown = (container as Record<string, unknown>)[key]
  if (typeof value !== 'number') return undefined
  const source = numberSourceOf(container, key)
  if (source === undefined) return Number.isSafeInteger(value) ? BigInt(value) : undefined
  const integer = integerFromJsonNumber(source)
  if (integer === undefined || integer < int64Min || integer > int64Max) return undefined
  return integer
}

// Exact integer arithmetic on the decimal text; gives up (undefined) on non-integers and on
// magnitudes with more digits than int64 has, before a huge exponent can cost any time.
function integerFromJsonNumber (source: string): bigint | undefined {
  const parts = jsonNumberParts.exec(source)
  if (parts === null) return undefined
  const [, sign = '', wholeDigits = '', fractionDigits = '', exponentText = '0'] = parts
  let digits = (wholeDigits + fractionDigits).replace(/^0+/, '')
  if (digits === '') return 0n
  let scale = Number(exponentText) - fractionDigits.length
  if (scale < 0) {
    const dropped = digits.slice(Math.max(0, digits.length + scale))
    if (!/^0*$/.test(dropped)) return undefined
    digits = digits.slice(0, digits.length + scale)
    scale = 0
  }
  if (digits.length + scale > int64MaxDigits) return undefined
  return BigInt(sign + digits + '0'.repeat(scale))
}
