// The request constraints that got narrower from the baseline to the spec: a request a client
// could send before may now be refused. Optic's breaking-change rules compare types, required
// fields and enums, but not these (a new maxLength, a higher minimum, a pattern, int64 to int32).
// Each is { change, path }: "GET /plants: query parameter limit: maximum went from 1000 to 3",
// at the schema that now says so.
import { resolve } from './resolve-ref.mjs'

const upperBounds = ['maxLength', 'maxItems', 'maxProperties', 'maximum', 'exclusiveMaximum']
const lowerBounds = ['minLength', 'minItems', 'minProperties', 'minimum', 'exclusiveMinimum']
// A value added to one of these refuses what it does not allow, whatever was there before.
const restrictions = ['pattern', 'format', 'multipleOf']
const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

// The constraints of a schema, by where they apply: '' is the value itself, '.name' a property,
// '[]' the items; each with the schema object that sets it. allOf parts add up, so the tightest
// bound of them all is the one in force.
function constraintsOf (document, schema, where = '', found = new Map(), visiting = new Set()) {
  const resolved = resolve(document, schema)
  if (visiting.has(resolved)) return found
  visiting.add(resolved)
  const constraints = found.get(where) ?? { values: {}, setBy: {} }
  const set = (key, value) => {
    constraints.values[key] = value
    constraints.setBy[key] = resolved
  }
  for (const key of upperBounds) {
    if (typeof resolved[key] === 'number' && resolved[key] < (constraints.values[key] ?? Infinity)) set(key, resolved[key])
  }
  for (const key of lowerBounds) {
    if (typeof resolved[key] === 'number' && resolved[key] > (constraints.values[key] ?? -Infinity)) set(key, resolved[key])
  }
  for (const key of restrictions) {
    if (resolved[key] !== undefined) set(key, [...new Set([...(constraints.values[key] ?? []), String(resolved[key])])])
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
        schemas.set(`${label}: request body (${mediaType})`, { schema: content.schema, at: ['paths', path, method, 'requestBody'] })
      }
      for (const parameter of [...(pathItem.parameters ?? []), ...(operation.parameters ?? [])].map((node) => resolve(document, node))) {
        schemas.set(`${label}: ${parameter.in} parameter ${parameter.name}`, { schema: parameter.schema, at: ['paths', path, method, 'parameters'] })
      }
    }
  }
  return schemas
}

function narrowings (before, after) {
  const found = []
  for (const key of upperBounds) {
    if (after[key] !== undefined && (before[key] === undefined || after[key] < before[key])) {
      found.push({ key, text: before[key] === undefined ? `${key} ${after[key]} is new` : `${key} went from ${before[key]} to ${after[key]}` })
    }
  }
  for (const key of lowerBounds) {
    if (after[key] !== undefined && (before[key] === undefined || after[key] > before[key])) {
      found.push({ key, text: before[key] === undefined ? `${key} ${after[key]} is new` : `${key} went from ${before[key]} to ${after[key]}` })
    }
  }
  for (const key of restrictions) {
    for (const value of after[key] ?? []) {
      if (!(before[key] ?? []).includes(value)) found.push({ key, text: `${key} ${JSON.stringify(value)} is new` })
    }
  }
  return found
}

export function narrowedRequestConstraints (baseline, spec) {
  const findings = []
  const before = requestSchemas(baseline.value)
  for (const [label, { schema, at }] of requestSchemas(spec.value)) {
    if (!before.has(label)) continue
    const oldConstraints = constraintsOf(baseline.value, before.get(label).schema)
    for (const [where, { values, setBy }] of constraintsOf(spec.value, schema)) {
      // A property that was not declared before had no constraints a client relied on.
      if (!oldConstraints.has(where)) continue
      for (const { key, text } of narrowings(oldConstraints.get(where).values, values)) {
        findings.push({
          change: `${label}${where === '' ? '' : ` ${where.slice(1)}`}: ${text}`,
          path: [...(spec.pathOf(setBy[key]) ?? at), key],
        })
      }
    }
  }
  return findings
}
