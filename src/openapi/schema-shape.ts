import { resolveLocalRef } from './openapi-document.js'

export interface SchemaNode {
  readonly $ref?: string
  readonly allOf?: readonly SchemaNode[]
  readonly format?: string
  readonly properties?: Readonly<Record<string, SchemaNode>>
  readonly additionalProperties?: unknown
  readonly items?: SchemaNode
}

// What a schema of openapi.yaml declares of the values it accepts, its references followed and
// its allOf parts merged: its format, its properties, whether it keeps properties it does not
// declare, and the schema of its items.
export interface SchemaShape {
  readonly format: string | undefined
  readonly properties: ReadonlyMap<string, SchemaNode>
  readonly keepsOtherProperties: boolean
  readonly items: SchemaNode | undefined
}

export function shapeOf (document: object, schema: SchemaNode): SchemaShape {
  const properties = new Map<string, SchemaNode>()
  let declaresProperties = false
  let keepsOtherProperties = false
  let format: string | undefined
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
    format ??= node.format
    items ??= node.items
  }
  visit(schema, new Set())
  return { format, properties, keepsOtherProperties: keepsOtherProperties || !declaresProperties, items }
}

// Compiles a function of each schema reachable from one, once per schema: a schema that refers
// to itself, at any depth, gets one that calls the function being compiled.
export function compileRecursively<Compiled extends (...args: never[]) => unknown> (
  compile: (schema: SchemaNode, compiled: (schema: SchemaNode) => Compiled) => Compiled
): (schema: SchemaNode) => Compiled {
  const compiledBySchema = new Map<SchemaNode, Compiled>()
  const compiledFor = (schema: SchemaNode): Compiled => {
    const known = compiledBySchema.get(schema)
    if (known !== undefined) return known
    compiledBySchema.set(schema, ((...args: Parameters<Compiled>) => compiled(...args)) as Compiled)
    const compiled = compile(schema, compiledFor)
    compiledBySchema.set(schema, compiled)
    return compiled
  }
  return compiledFor
}
