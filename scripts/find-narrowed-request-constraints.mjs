// Lists the request constraints that got narrower from BASELINE to SPEC: a request a client
// could send before may now be refused. Optic's breaking-change rules compare types, required
// fields and enums, but not these (a new maxLength, a higher minimum, a pattern, int64 to int32).
//
//   node scripts/find-narrowed-request-constraints.mjs BASELINE SPEC
//
// Prints one line per narrowing ("  POST /plants: request body.name: maxLength 20 is new") and
// exits 0; exits 2 when a file cannot be read.
import { readFileSync } from 'node:fs'
import process from 'node:process'
import { parse } from 'yaml'

const upperBounds = ['maxLength', 'maxItems', 'maxProperties', 'maximum', 'exclusiveMaximum']
const lowerBounds = ['minLength', 'minItems', 'minProperties', 'minimum', 'exclusiveMinimum']
// A value added to one of these refuses what it does not allow, whatever was there before.
const restrictions = ['pattern', 'format', 'multipleOf']
const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

function resolve (document, node) {
  let resolved = node
  while (resolved?.$ref !== undefined) {
    resolved = resolved.$ref.slice(2).split('/')
      .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce((parent, key) => parent?.[key], document)
  }
  return resolved ?? {}
}

// The constraints of a schema, by where they apply: '' is the value itself, '.name' a property,
// '[]' the items. allOf parts add up, so the tightest bound of them all is the one in force.
function constraintsOf (document, schema, where = '', found = new Map(), visiting = new Set()) {
  const resolved = resolve(document, schema)
  if (visiting.has(resolved)) return found
  visiting.add(resolved)
  const constraints = found.get(where) ?? {}
  for (const key of upperBounds) {
    if (typeof resolved[key] === 'number') constraints[key] = Math.min(constraints[key] ?? Infinity, resolved[key])
  }
  for (const key of lowerBounds) {
    if (typeof resolved[key] === 'number') constraints[key] = Math.max(constraints[key] ?? -Infinity, resolved[key])
  }
  for (const key of restrictions) {
    if (resolved[key] !== undefined) constraints[key] = [...new Set([...(constraints[key] ?? []), String(resolved[key])])]
  }
  found.set(where, constraints)
  for (const part of resolved.allOf ?? []) constraintsOf(document, part, where, found, visiting)
  for (const [name, property] of Object.entries(resolved.properties ?? {})) {
    constraintsOf(document, property, `${where}.${name}`, found, visiting)
  }
  if (resolved.items !== undefined) constraintsOf(document, resolved.items, `${where}[]`, found, visiting)
  visiting.delete(resolved)
  return found
}

// Every schema a request is checked against: bodies by media type, parameters by place and name.
function requestSchemas (document) {
  const schemas = new Map()
  for (const [path, pathItem] of Object.entries(document.paths ?? {})) {
    for (const method of methods) {
      const operation = pathItem?.[method]
      if (operation === undefined) continue
      const label = `${method.toUpperCase()} ${path}`
      const body = resolve(document, operation.requestBody)
      for (const [mediaType, content] of Object.entries(body.content ?? {})) {
        schemas.set(`${label}: request body (${mediaType})`, content.schema)
      }
      for (const parameter of [...(pathItem.parameters ?? []), ...(operation.parameters ?? [])].map((node) => resolve(document, node))) {
        schemas.set(`${label}: ${parameter.in} parameter ${parameter.name}`, parameter.schema)
      }
    }
  }
  return schemas
}

function narrowings (before, after) {
  const found = []
  for (const key of upperBounds) {
    if (after[key] !== undefined && (before[key] === undefined || after[key] < before[key])) {
      found.push(before[key] === undefined ? `${key} ${after[key]} is new` : `${key} went from ${before[key]} to ${after[key]}`)
    }
  }
  for (const key of lowerBounds) {
    if (after[key] !== undefined && (before[key] === undefined || after[key] > before[key])) {
      found.push(before[key] === undefined ? `${key} ${after[key]} is new` : `${key} went from ${before[key]} to ${after[key]}`)
    }
  }
  for (const key of restrictions) {
    for (const value of after[key] ?? []) {
      if (!(before[key] ?? []).includes(value)) found.push(`${key} ${JSON.stringify(value)} is new`)
    }
  }
  return found
}

let baseline, spec
try {
  [baseline, spec] = process.argv.slice(2, 4).map((file) => parse(readFileSync(file, 'utf8')))
} catch (error) {
  process.stderr.write(`cannot read the specs: ${error.message}\n`)
  process.exit(2)
}
const before = requestSchemas(baseline)
for (const [label, schema] of requestSchemas(spec)) {
  if (!before.has(label)) continue
  const oldConstraints = constraintsOf(baseline, before.get(label))
  for (const [where, constraints] of constraintsOf(spec, schema)) {
    // A property that was not declared before had no constraints a client relied on.
    if (!oldConstraints.has(where)) continue
    for (const narrowing of narrowings(oldConstraints.get(where), constraints)) {
      process.stdout.write(`  ${label}${where === '' ? '' : ` ${where.slice(1)}`}: ${narrowing}\n`)
    }
  }
}
