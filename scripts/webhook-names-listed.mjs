// A webhook endpoint subscribes by naming webhooks (NewWebhookEndpoint's `events`), and its schema
// lists the names the service accepts, so that a client, a generated SDK or a fuzzer knows them:
// they must be exactly the names under openapi.yaml's `webhooks`. A webhook added (or removed)
// without its name in that list would be refused (or offered) by the schema while the service
// sends it; `npm run build` stops on the difference, naming it.
import YAML from 'yaml'

const eventsPath = ['components', 'schemas', 'NewWebhookEndpoint', 'properties', 'events', 'items', 'enum']

// What is wrong with the list, one line each; none when it names exactly the webhooks.
export function webhookNamesProblems (document) {
  const webhooks = Object.keys(document.webhooks ?? {})
  let listed = document
  for (const key of eventsPath) listed = listed?.[key]
  if (!Array.isArray(listed)) return [`${eventsPath.join('.')} is not a list of the webhooks' names (${webhooks.join(', ')})`]
  const problems = []
  for (const name of webhooks.filter((webhook) => !listed.includes(webhook))) {
    problems.push(`the webhook ${name} is not in ${eventsPath.join('.')}: add it, or no endpoint can subscribe to it`)
  }
  for (const name of listed.filter((event) => !webhooks.includes(event))) {
    problems.push(`${eventsPath.join('.')} names ${name}, which is not under webhooks: remove it`)
  }
  return problems
}

export function webhookNamesProblemsOf (yamlText) {
  return webhookNamesProblems(YAML.parse(yamlText))
}
