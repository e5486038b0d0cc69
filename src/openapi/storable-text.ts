import type { Ajv, SchemaValidateFunction } from 'ajv'
import { resolveLocalRef } from './openapi-document.js'

// A string a request body declares is one the service may store, and every backend must hold it
// exactly: PostgreSQL's text refuses a NUL character, and a lone surrogate is not Unicode text at
// all, so it has no UTF-8 form. Each such `type: string` gets this keyword, checked before its
// `pattern` (openapi.yaml's own no-NUL pattern included), so that such a string is the documented
// 40002 rather than a pattern mismatch. Strings in properties the spec does not declare meet no
// schema: they are never stored, so they are accepted as they are.
export const storableTextKeyword = 'x-storable-text'

export type TextProblem = 'nul' | 'lone-surrogate'

const loneSurrogatePattern = /\p{Surrogate}/u

// A copy of the document with the keyword beside every `type: string` a request body may hold,
// in the body schemas and in the components they refer to. Parameters are not stored: a NUL
// there fails their own schema like any other character it does not allow.
export function markRequestBodyStrings<T extends object> (document: T): T {
  const marked = structuredClone(document)
  const visited = new Set<unknown>()
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null || visited.has(node)) return
    visited.add(node)
    if (Array.isArray(node)) {
      node.forEach(visit)
      return
    }
    const record = node as Record<string, unknown>
    if (typeof record.$ref === 'string') visit(resolveLocalRef(marked, record.$ref))
    if (record.type === 'string') record[storableTextKeyword] = true
    Object.values(record).forEach(visit)
  }
  for (const pathItem of Object.values((marked as { paths?: object }).paths ?? {})) {
    for (const operation of Object.values(pathItem as object)) {
      const requestBody = (operation as { requestBody?: { content?: object } } | undefined)?.requestBody
      for (const mediaType of Object.values(requestBody?.content ?? {})) visit((mediaType as { schema?: unknown }).schema)
    }
  }
  return marked
}

// Ajv plugin: registers the keyword. Its errors carry `params.problem`.
export function addStorableTextKeyword (ajv: Ajv): Ajv {
  const validate: SchemaValidateFunction = (enabled: boolean, data: string) => {
    if (!enabled) return true
    const problem: TextProblem | undefined = data.includes('\u0000')
      ? 'nul'
      : loneSurrogatePattern.test(data) ? 'lone-surrogate' : undefined
    if (problem === undefined) return true
    validate.errors = [{
      keyword: storableTextKeyword,
      message: problem === 'nul' ? 'contains a NUL character' : 'contains a lone surrogate',
      params: { problem },
    }]
    return false
  }
  return ajv.addKeyword({
    keyword: storableTextKeyword, type: 'string', schemaType: 'boolean', errors: true, before: 'pattern', validate,
  })
}
