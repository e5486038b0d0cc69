import type { Ajv, SchemaValidateFunction } from 'ajv'
import { type Int64Reading, readInt64 } from './read-int64.js'

// The validator sees doubles, so each `format: int64` schema of the spec also gets this keyword,
// which reads the number as it was sent (see README.md here).
export const exactInt64Keyword = 'x-exact-int64'

export type Int64Problem = Exclude<Int64Reading, bigint>

// A copy of the document with the keyword beside every `format: int64`.
export function markInt64Schemas<T> (document: T): T {
  const marked = structuredClone(document)
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit)
    } else if (typeof node === 'object' && node !== null) {
      const record = node as Record<string, unknown>
      if (record.format === 'int64') record[exactInt64Keyword] = true
      Object.values(record).forEach(visit)
    }
  }
  visit(marked)
  return marked
}

// Ajv plugin: registers the keyword. Its errors carry `params.problem`.
export function addExactInt64Keyword (ajv: Ajv): Ajv {
  const validate: SchemaValidateFunction = (enabled: boolean, data: number, _schema, context) => {
    if (!enabled) return true
    // A number with no parent (a whole body that is one number) has no source text kept: only
    // a safe integer can be trusted there.
    const reading = context?.parentData === undefined
      ? (Number.isSafeInteger(data) ? BigInt(data) : 'not-an-integer')
      : readInt64(context.parentData as object, context.parentDataProperty)
    if (typeof reading === 'bigint') return true
    const problem: Int64Problem = reading
    validate.errors = [{
      keyword: exactInt64Keyword,
      message: problem === 'out-of-range' ? 'must be an integer from -9223372036854775808 to 9223372036854775807' : 'must be integer',
      params: { problem },
    }]
    return false
  }
  return ajv.addKeyword({ keyword: exactInt64Keyword, type: 'number', schemaType: 'boolean', errors: true, validate })
}
