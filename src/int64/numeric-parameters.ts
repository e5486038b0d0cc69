import { doubleOfJsonNumber, isJsonNumber } from '../json/parse-json-exactly.js'
import { rememberNumberSource } from '../json/number-sources.js'

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
      if (typeof text !== 'string' || !isJsonNumber(text)) continue
      const value = doubleOfJsonNumber(text)
      parameters[name] = value
      rememberNumberSource(parameters, name, text, value)
    }
  }
}

function isNumericType (type: unknown): boolean {
  const types = Array.isArray(type) ? type : [type]
  return types.includes('integer') || types.includes('number')
}
