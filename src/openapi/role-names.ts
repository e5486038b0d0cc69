import { listOperations, type OpenApiDocument, securityOf } from './openapi-document.js'

// Every role some operation's security requirement names (`bearerAuth: [plants:write]`): the
// roles a credential can be given, sorted.
export function roleNamesOf (document: OpenApiDocument): string[] {
  const names = listOperations(document).flatMap(({ operation }) =>
    securityOf(document, operation).flatMap((requirement) => Object.values(requirement).flat()))
  return [...new Set(names)].sort()
}
