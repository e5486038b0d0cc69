import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import YAML from 'yaml'
// @ts-expect-error -- a build script in plain JavaScript, without type declarations
import { webhookNamesProblems } from '../scripts/webhook-names-listed.mjs'

// The names an endpoint may subscribe to (NewWebhookEndpoint's events) are the spec's webhooks,
// checked by `npm run build` on openapi.yaml and on edited copies of it.
interface Spec {
  webhooks: Record<string, unknown>
  components: { schemas: { NewWebhookEndpoint: { properties: { events: { items: { enum?: string[] } } } } } }
}
const spec = (): Spec => YAML.parse(readFileSync(join(import.meta.dirname, '..', 'openapi.yaml'), 'utf8'))
const listed = (document: Spec): string[] => document.components.schemas.NewWebhookEndpoint.properties.events.items.enum ?? []

t.same(webhookNamesProblems(spec()), [], 'openapi.yaml lists exactly its webhooks')

t.test('a webhook added without its name in the list is named', async (t) => {
  const document = spec()
  document.webhooks.plantWatered = document.webhooks.newPlant
  t.same(webhookNamesProblems(document), [
    'the webhook plantWatered is not in components.schemas.NewWebhookEndpoint.properties.events.items.enum: add it, or no endpoint can subscribe to it',
  ])
  listed(document).push('plantWatered')
  t.same(webhookNamesProblems(document), [], 'and listing it is enough')
})

t.test('a webhook removed while its name stays listed is named', async (t) => {
  const document = spec()
  delete document.webhooks.plantDeleted
  t.same(webhookNamesProblems(document), [
    'components.schemas.NewWebhookEndpoint.properties.events.items.enum names plantDeleted, which is not under webhooks: remove it',
  ])
})

t.test('a list that is not there is named with the names it should hold', async (t) => {
  const document = spec()
  delete document.components.schemas.NewWebhookEndpoint.properties.events.items.enum
  t.match(webhookNamesProblems(document), [/is not a list of the webhooks' names \(newPlant, plantUpdated, plantDeleted\)/])
})
