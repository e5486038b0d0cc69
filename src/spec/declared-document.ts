import { writeMember } from '../json/canonical-json.js'
import { resolveLocalRef } from './openapi-document.js'

interface SchemaNode {
  readonly $ref?: string
  readonly allOf?: readonly SchemaNode[]
  readonly properties?: Readonly<Record<string, SchemaNode>>
  readonly additionalProperties?: unknown
  readonly items?: SchemaNode
}

// Writes a value's member as canonical JSON (src/json/canonical-json.ts).
type MemberWriter = (container: object, key: string | number) => string

// A writer of the document a schema of openapi.yaml declares: of a validated value, it keeps
// the properties the schema declares (through $ref and allOf, and in nested objects and arrays
// alike) and drops the others, and writes what it keeps as canonical JSON. An object schema
// that declares no properties, or allows additional ones, keeps every property it is given.
// A field added to the spec is kept with no change to code.
export function compileDocumentWriter (document: object, ref: string): (value: unknown) => string {
  const writers = new Map<SchemaNode, MemberWriter>()

  const writerFor = (schema: SchemaNode): MemberWriter => {
    const known = writers.get(schema)
    if (known !== undefined) return known
    let compiled: MemberWriter = writeMember
    // A schema that refers to itself, at any depth, gets the writer being compiled.
    writers.set(schema, (container, key) => compiled(container, key))
    compiled = compileWriter(flatten(document, schema), writerFor)
    return compiled
  }

  const writeDocument = writerFor({ $ref: ref })
  return (value) => writeDocument({ value }, 'value')
}

interface FlatSchema {
  readonly properties: ReadonlyMap<string, SchemaNode>
  readonly keepsOtherProperties: boolean
  readonly items: SchemaNode | undefined
}

// The properties, additional properties and items a schema declares, its references followed
// and its allOf parts merged.
function flatten (document: object, schema: SchemaNode): FlatSchema {
  const properties = new Map<string, SchemaNode>()
  let declaresProperties = false
  let keepsOtherProperties = false
  let items: SchemaNode | undefined
  const visit = (node: SchemaNode | undefined, seen: ReadonlySet<SchemaNode>): void => {
    if (node === undefined || seen.has(node)) return
    const path = new Set(seen).add(node)
    if (node.$ref !== undefined) visit(resolveLocalRef(document, node.$ref) as SchemaNode | undefined, path)
    for (const part of node.allOf ?? []) visit(part, path)
    for (const [name, property] of Object.entries(node.properties ?? {})) {
      declaresProperties = true
      if (!properties.has(name)) properties.set(name, property)
    }
    if (node.additionalProperties !== undefined && node.additionalProperties !== false) keepsOtherProperties = true
    items ??= node.items
  }
  visit(schema, new Set())
  return { properties, keepsOtherProperties: keepsOtherProperties || !declaresProperties, items }
}

function compileWriter ({ properties, keepsOtherProperties, items }: FlatSchema, writerFor: (schema: SchemaNode) => MemberWriter): MemberWriter {
  if (items !== undefined) {
    const writeItem = writerFor(items)
    return (container, key) => {
      const value: unknown = (container as Record<string | number, unknown>)[key]
      if (!Array.isArray(value)) return writeMember(container, key)
      return `[${value.map((_, index) => writeItem(value, index)).join(',')}]`
    }
  }
  if (properties.size === 0) return writeMember
  const declared = new Map([...properties].map(([name, schema]) => [name, { prefix: `${JSON.stringify(name)}:`, write: writerFor(schema) }]))
  const declaredNames = [...declared.keys()].sort()
  return (container, key) => {
    const value: unknown = (container as Record<string | number, unknown>)[key]
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return writeMember(container, key)
    const names = keepsOtherProperties ? Object.keys(value).sort() : declaredNames
    const members: string[] = []
    for (const name of names) {
      if (!Object.hasOwn(value, name)) continue
      const property = declared.get(name)
      members.push(property === undefined
        ? `${JSON.stringify(name)}:${writeMember(value, name)}`
        : property.prefix + property.write(value, name))
    }
    return `{${members.join(',')}}`
  }
}
