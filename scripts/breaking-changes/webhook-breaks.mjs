// The breaks in the spec's `webhooks`, which Optic does not compare. For a webhook the service is
// the sender and the receiver parses what it gets, so the rules of an operation turn around: a
// field removed from the body, or no longer required, breaks receivers that read it, and so do a
// type or an enum value they have not seen; a new field, optional or required, does not. A removed
// webhook breaks its receivers; a new one does not. The responses a webhook declares are what the
// service accepts from a receiver: a removed status, or a response body the service now needs more
// of, breaks receivers that answer as before. Each break is { change, path }, the path in the spec.
import { resolve } from './resolve-ref.mjs'

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

export function webhookBreaks (baseline, spec) {
  const findings = []
  const report = (change, path) => findings.push({ change, path })
  for (const [name, beforeItem] of Object.entries(baseline.value.webhooks ?? {})) {
    const afterItem = spec.value.webhooks?.[name]
    if (afterItem === undefined) {
      report(`webhook ${name}: removed, so its receivers get it no more`, ['webhooks', name])
      continue
    }
    for (const method of methods.filter((method) => beforeItem[method] !== undefined)) {
      const label = method === 'post' ? `webhook ${name}` : `webhook ${name} (${method.toUpperCase()})`
      const at = ['webhooks', name, method]
      if (afterItem[method] === undefined) {
        report(`${label}: removed, so its receivers get it no more`, at)
        continue
      }
      const compare = new WebhookComparison(baseline, spec, label, report)
      compare.operation(resolve(baseline.value, beforeItem[method]), resolve(spec.value, afterItem[method]), at)
    }
  }
  return findings
}

class WebhookComparison {
  constructor (baseline, spec, label, report) {
    this.baseline = baseline
    this.spec = spec
    this.label = label
    this.report = (what, path) => report(`${label}: ${what}`, path)
  }

  operation (before, after, at) {
    const afterParameters = (after.parameters ?? []).map((node) => resolve(this.spec.value, node))
    for (const parameter of (before.parameters ?? []).map((node) => resolve(this.baseline.value, node))) {
      const where = `${parameter.in} parameter ${parameter.name}`
      const now = afterParameters.find(({ in: place, name }) => place === parameter.in && name === parameter.name)
      if (now === undefined) {
        this.report(`${where} was removed, and receivers read it`, [...at, 'parameters'])
        continue
      }
      if (parameter.required === true && now.required !== true) this.report(`${where} is no longer required`, this.spec.pathOf(now) ?? [...at, 'parameters'])
      this.readSchema(parameter.schema, now.schema, where, new Set())
    }

    const beforeBody = resolve(this.baseline.value, before.requestBody)
    const afterBody = resolve(this.spec.value, after.requestBody)
    const bodyAt = this.spec.pathOf(afterBody) ?? [...at, 'requestBody']
    if (beforeBody.required === true && afterBody.required !== true) this.report('the request body is no longer required', bodyAt)
    for (const [mediaType, content] of Object.entries(beforeBody.content ?? {})) {
      const now = afterBody.content?.[mediaType]
      if (now === undefined) {
        this.report(`request body (${mediaType}) was removed`, bodyAt)
        continue
      }
      this.readSchema(content.schema, now.schema, `request body (${mediaType})`, new Set())
    }

    for (const [status, response] of Object.entries(before.responses ?? {})) {
      const now = after.responses?.[status]
      if (now === undefined) {
        this.report(`response ${status} was removed, and the service accepts it no more`, [...at, 'responses'])
        continue
      }
      const afterResponse = resolve(this.spec.value, now)
      for (const [mediaType, content] of Object.entries(afterResponse.content ?? {})) {
        const earlier = resolve(this.baseline.value, response).content?.[mediaType]
        if (earlier !== undefined) this.acceptSchema(earlier.schema, content.schema, `response ${status} (${mediaType})`, new Set())
      }
    }
  }

  // What a receiver reads in a body the service sends: all it relied on must still be there.
  readSchema (beforeSchema, afterSchema, where, visiting) {
    const before = flatten(this.baseline.value, beforeSchema)
    const after = flatten(this.spec.value, afterSchema)
    if (visiting.has(before.node) && visiting.has(after.node)) return
    visiting.add(before.node)
    visiting.add(after.node)
    const at = this.spec.pathOf(after.node) ?? []
    if (before.types !== undefined) {
      const unseen = after.types === undefined ? ['any type'] : [...after.types].filter((type) => !allows(before.types, type))
      if (unseen.length > 0) this.report(`${where}: type went from ${[...before.types].join(' or ')} to ${after.types === undefined ? 'any' : [...after.types].join(' or ')}`, [...at, 'type'])
    }
    if (before.values !== undefined) {
      if (after.values === undefined) {
        this.report(`${where}: any value may come, where it was one of ${before.values.map((value) => JSON.stringify(value)).join(', ')}`, at)
      } else {
        for (const value of after.values.filter((value) => !before.values.some((old) => equal(old, value)))) {
          this.report(`${where}: the value ${JSON.stringify(value)} is new`, at)
        }
      }
    }
    for (const [name, property] of before.properties) {
      const field = where.startsWith('request body') || where.includes('parameter') ? `${where} ${name}` : `${where}.${name}`
      const now = after.properties.get(name)
      if (now === undefined) {
        this.report(`${field} was removed, and receivers read it`, [...(this.spec.pathOf(after.propertiesOwner) ?? at), 'properties'])
        continue
      }
      if (before.required.has(name) && !after.required.has(name)) {
        this.report(`${field} is no longer required, and receivers read it`, [...(this.spec.pathOf(now.owner) ?? at), 'properties', name])
      }
      this.readSchema(property.schema, now.schema, field, visiting)
    }
    if (before.items !== undefined && after.items !== undefined) this.readSchema(before.items, after.items, `${where}[]`, visiting)
  }

  // What the service reads in a receiver's answer: it must still take all it took before.
  acceptSchema (beforeSchema, afterSchema, where, visiting) {
    const before = flatten(this.baseline.value, beforeSchema)
    const after = flatten(this.spec.value, afterSchema)
    if (visiting.has(after.node)) return
    visiting.add(after.node)
    const at = this.spec.pathOf(after.node) ?? []
    if (after.types !== undefined) {
      const refused = before.types === undefined ? ['any type'] : [...before.types].filter((type) => !allows(after.types, type))
      if (refused.length > 0) this.report(`${where}: type went from ${before.types === undefined ? 'any' : [...before.types].join(' or ')} to ${[...after.types].join(' or ')}`, [...at, 'type'])
    }
    for (const name of after.required) {
      if (!before.required.has(name)) this.report(`${where}: ${name} is newly required`, [...at, 'required'])
    }
    for (const [name, property] of after.properties) {
      const earlier = before.properties.get(name)
      if (earlier !== undefined) this.acceptSchema(earlier.schema, property.schema, `${where}.${name}`, visiting)
    }
  }
}

// A schema with its allOf parts added up: the properties and required names of them all, the
// types and values every part allows.
function flatten (document, schema, flat = { node: undefined, properties: new Map(), required: new Set(), types: undefined, values: undefined, items: undefined, propertiesOwner: undefined }) {
  const resolved = resolve(document, schema)
  flat.node ??= resolved
  if (resolved.properties !== undefined) flat.propertiesOwner ??= resolved
  for (const [name, property] of Object.entries(resolved.properties ?? {})) {
    if (!flat.properties.has(name)) flat.properties.set(name, { schema: property, owner: resolved })
  }
  for (const name of resolved.required ?? []) flat.required.add(name)
  if (resolved.type !== undefined) {
    const types = new Set([resolved.type].flat())
    flat.types = flat.types === undefined ? types : new Set([...flat.types].filter((type) => allows(types, type)))
  }
  const values = resolved.const !== undefined ? [resolved.const] : resolved.enum
  if (values !== undefined) flat.values = flat.values === undefined ? values : flat.values.filter((value) => values.some((other) => equal(other, value)))
  flat.items ??= resolved.items
  for (const part of resolved.allOf ?? []) flatten(document, part, flat)
  return flat
}

// Whether a set of JSON Schema types takes a value of `type`: a number takes an integer.
function allows (types, type) {
  return types.has(type) || (type === 'integer' && types.has('number'))
}

function equal (a, b) {
  return JSON.stringify(a) === JSON.stringify(b)
}
