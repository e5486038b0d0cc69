import { writeMember } from '../int64/canonical-json.js'
import { compileRecursively, type SchemaNode, type SchemaShape, shapeOf } from './schema-shape.js'

// Writes a value's member as canonical JSON (src/json/canonical-json.ts).
type MemberWriter = (container: object, key: string | number) => string

// A writer of the document a schema of openapi.yaml declares: of a validated value, it keeps
// the properties the schema declares (through $ref and allOf, and in nested objects and arrays
// alike) and drops the others, and writes what it keeps as canonical JSON. An object schema
// that declares no properties, or allows additional ones, keeps every property it is given.
// A field added to the spec is kept with no change to code.
export function compileDocumentWriter (document: object, ref: string): (value: unknown) => string {
  const writerFor = compileRecursively<MemberWriter>((schema, writerOf) => compileWriter(shapeOf(document, schema), writerOf))
  const writeDocument = writerFor({ $ref: ref })
  return (value) => writeDocument({ value }, 'value')
}

function compileWriter ({ properties, keepsOtherProperties, items }: SchemaShape, writerFor: (schema: SchemaNode) => MemberWriter): MemberWriter {
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
