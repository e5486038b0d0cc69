import { numberSourceOf } from '../json/number-sources.js'

const int64Min = -(2n ** 63n)
const int64Max = 2n ** 63n - 1n
const int64MaxDigits = 19
const jsonNumberParts = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/

export type Int64Reading = bigint | 'not-an-integer' | 'out-of-range'

// The exact int64 value of a number property of a parsed body or parameter list, judged on the
// number as it was sent rather than on its double: "1.0" and "1e3" are integers, as in JSON
// Schema, while "9007199254740993.5" is not, though its double is.
export function readInt64 (container: object, key: string | number): Int64Reading {
  const value: unknown = (container as Record<string | number, unknown>)[key]
  if (typeof value !== 'number') return 'not-an-integer'
  const source = numberSourceOf(container, key)
  if (source === undefined) return Number.isSafeInteger(value) ? BigInt(value) : 'not-an-integer'
  return int64FromJsonNumber(source)
}

// For a handler: the int64 the validator has already accepted.
export function validatedInt64 (container: object, key: string): bigint {
  const reading = readInt64(container, key)
  if (typeof reading !== 'bigint') throw new Error(`${key} passed validation but reads as ${reading}`)
  return reading
}

// Exact integer arithmetic on the decimal text. It settles integer-ness and magnitude from the
// digits and the exponent before building a bigint, so a huge exponent costs no time.
function int64FromJsonNumber (source: string): Int64Reading {
  const parts = jsonNumberParts.exec(source)
  if (parts === null) return 'not-an-integer'
  const [, sign = '', wholeDigits = '', fractionDigits = '', exponentText = '0'] = parts
  let digits = (wholeDigits + fractionDigits).replace(/^0+/, '')
  if (digits === '') return 0n
  let scale = Number(exponentText) - fractionDigits.length
  if (scale < 0) {
    const dropped = digits.slice(Math.max(0, digits.length + scale))
    if (!/^0*$/.test(dropped)) return 'not-an-integer'
    digits = digits.slice(0, digits.length + scale)
    scale = 0
  }
  if (digits.length + scale > int64MaxDigits) return 'out-of-range'
  const integer = BigInt(sign + digits + '0'.repeat(scale))
  return integer < int64Min || integer > int64Max ? 'out-of-range' : integer
}
