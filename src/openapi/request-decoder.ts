import { validatedInt64 } from '../int64/read-int64.js'
import { type OpenApiDocument, type OperationEntry, resolveLocalRef } from './openapi-document.js'
import { compileRecursively, type SchemaNode, shapeOf } from './schema-shape.js'

// Replaces the value at container[key] with its decoded form, where there is one.
type Decode = (container: Record<string | number, unknown>, key: string | number) => void

interface Parameter {
  readonly $ref?: string
  readonly name?: string
  readonly in?: string
  readonly schema?: SchemaNode
}

export interface DecodedParts {
  params: unknown
  query: unknown
  body: unknown
}

// Decodes what a validated request holds where openapi.yaml declares an int64 (a path or query
// parameter, a property of the JSON body at any depth) into the exact bigint it stands for, so
// that a handler's types (src/handlers/typed-handler.ts) and values agree. The validator has
// already accepted each one as an int64 (src/int64/), so reading it cannot fail. Undefined when
// the operation declares no int64 anywhere: its requests are handed on as they are.
export function compileRequestDecoder (document: OpenApiDocument, { path, method }: OperationEntry): ((request: DecodedParts) => void) | undefined {
  const decoderFor = compileRecursively<Decode>((schema, decoderOf) => compileDecoder(document, schema, decoderOf))
  const pathItem = document.paths[path] as { parameters?: readonly Parameter[] } & Record<string, { parameters?: readonly Parameter[], requestBody?: unknown }>
  const operation = pathItem[method]!
  const parameters = [...(pathItem.parameters ?? []), ...(operation.parameters ?? [])]
    .map((parameter) => (parameter.$ref === undefined ? parameter : resolveLocalRef(document, parameter.$ref)) as Parameter)
  const inPart = (where: string): Array<[string, Decode]> => parameters
    .filter((parameter) => parameter.in === where && parameter.name !== undefined && parameter.schema !== undefined)
    .map((parameter) => [parameter.name!, decoderFor(parameter.schema!)] as [string, Decode])
    .filter(([, decode]) => decode !== skip)
  const pathParameters = inPart('path')
  const queryParameters = inPart('query')
  const bodySchema = jsonBodySchemaOf(document, operation.requestBody)
  const decodeBody = bodySchema === undefined ? skip : decoderFor(bodySchema)
  if (pathParameters.length === 0 && queryParameters.length === 0 && decodeBody === skip) return undefined
  return (request) => {
    for (const [name, decode] of pathParameters) decode(request.params as Record<string, unknown>, name)
    for (const [name, decode] of queryParameters) decode(request.query as Record<string, unknown>, name)
    decodeBody(request as unknown as Record<string, unknown>, 'body')
  }
}

// Nothing to decode in a value of this schema.
const skip: Decode = () => {}

function compileDecoder (document: object, schema: SchemaNode, decoderFor: (schema: SchemaNode) => Decode): Decode {
  const { format, properties, items } = shapeOf(document, schema)
  if (format === 'int64') {
    return (container, key) => {
      if (typeof container[key] === 'number') container[key] = validatedInt64(container, String(key))
    }
  }
  if (items !== undefined) {
    const decodeItem = decoderFor(items)
    if (decodeItem === skip) return skip
    return (container, key) => {
      const value = container[key]
      if (Array.isArray(value)) for (let index = 0; index < value.length; index++) decodeItem(value as unknown[] as Record<number, unknown>, index)
    }
  }
  const members = [...properties].map(([name, property]) => [name, decoderFor(property)] as const)
    .filter(([, decodeMember]) => decodeMember !== skip)
  if (members.length === 0) return skip
  return (container, key) => {
    const value = container[key]
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return
    const record = value as Record<string, unknown>
    for (const [name, decodeMember] of members) if (Object.hasOwn(record, name)) decodeMember(record, name)
  }
}

function jsonBodySchemaOf (document: object, requestBody: unknown): SchemaNode | undefined {
  const body = (requestBody as { $ref?: string } | undefined)?.$ref === undefined
    ? requestBody
    : resolveLocalRef(document, (requestBody as { $ref: string }).$ref)
  return (body as { content?: Record<string, { schema?: SchemaNode }> } | undefined)?.content?.['application/json']?.schema
}
