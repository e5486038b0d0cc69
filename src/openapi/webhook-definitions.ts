import { type PlantChange, plantChanges } from '../store/plant-writes.js'
import type { OpenApiDocument } from './openapi-document.js'

// A webhook of openapi.yaml: its name, and the change of the store that sends it.
export interface WebhookDefinition {
  readonly name: string
  readonly sentWhen: PlantChange
}

interface WebhookOperation {
  readonly 'x-sent-when'?: unknown
  readonly requestBody?: { readonly content?: Readonly<Record<string, { readonly schema?: unknown } | undefined>> }
}

interface EventSchema {
  readonly $ref?: string
  readonly required?: readonly string[]
  readonly properties?: Readonly<Record<string, { readonly const?: unknown } | undefined>>
}

// Every webhook openapi.yaml declares. The service writes each body itself, as Standard Webhooks
// lays it out (`type`, `timestamp`, `data`: the plant with its id), so a webhook whose schema
// says otherwise, or whose `x-sent-when` names no change the store makes, stops start-up with
// what is wrong rather than sending bodies its own contract refuses.
export function webhookDefinitions (document: OpenApiDocument): WebhookDefinition[] {
  const webhooks = (document.webhooks ?? {}) as Readonly<Record<string, { readonly post?: WebhookOperation } | undefined>>
  return Object.entries(webhooks).map(([name, pathItem]) => {
    const operation = pathItem?.post
    if (operation === undefined) throw new Error(`openapi.yaml: webhook ${name} declares no post`)
    const sentWhen = operation['x-sent-when']
    if (!plantChanges.includes(sentWhen as PlantChange)) {
      throw new Error(`openapi.yaml: webhook ${name}'s x-sent-when must be one of ${plantChanges.join(', ')}`)
    }
    const schema = resolved(document, operation.requestBody?.content?.['application/json']?.schema as EventSchema | undefined)
    const required = new Set(schema?.required ?? [])
    const fits = schema?.properties?.type?.const === name &&
      ['type', 'timestamp', 'data'].every((property) => required.has(property) && schema.properties?.[property] !== undefined)
    if (!fits) {
      throw new Error(`openapi.yaml: webhook ${name}'s application/json body must require type (const ${name}), timestamp and data`)
    }
    return { name, sentWhen: sentWhen as PlantChange }
  })
}

function resolved (document: OpenApiDocument, schema: EventSchema | undefined): EventSchema | undefined {
  const reference = schema?.$ref
  if (reference === undefined) return schema
  const name = reference.replace('#/components/schemas/', '')
  const components = document.components as { schemas?: Readonly<Record<string, EventSchema>> } | undefined
  return components?.schemas?.[name]
}
