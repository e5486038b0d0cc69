import { rememberNumberSource } from './number-sources.js'

// The whole text of a JSON number: the grammar a number in a body must follow.
const jsonNumber = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/

interface ParameterListSchema {
  readonly properties?: Readonly<Record<string, { readonly type?: unknown }>>
}

// Path, query and header parameters arrive as text. For the ones the spec declares as `integer`
// or `number`, this returns a function that reads each such value as a number in a body is read
// (same grammar, so "007", "+1" and " 1" stay text and fail their schema; the source text kept,
// so that `format: int64` is then checked exactly). Undefined when the list declares no number.
export function numericParameterReader (schema: unknown): ((parameters: Record<string, unknown>) => void) | undefined {
  const properties = Object.entries((schema as ParameterListSchema | undefined)?.properties ?? {})
  const numericNames = properties.filter(([, property]) => isNumericType(property.type)).map(([name]) => name)
  if (numericNames.length === 0) return undefined
  return (parameters) => {
    for (const name of numericNames) {
      const text = parameters[name]
      if (typeof text !== 'string' || !jsonNumber.test(text)) continue
      const value = Number(text)
      // As in a body, a number beyond the doubles is the largest one of its sign, and its text
      // tells its true value.
      parameters[name] = Number.isFinite(value) ? value : Math.sign(value) * Number.MAX_VALUE
      rememberNumberSource(parameters, name, text)
    }
  }
}

function isNumericType (type: unknown): boolean {
  const types = Array.isArray(type) ? type : [type]
  return types.includes('integer') || types.includes('number')
}
