import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import { describeOperation, type OpenApiDocument, type OperationEntry, securityOf } from '../spec/openapi-document.js'
import type { SecurityHandler } from './token-verifier.js'

// An operation's security requirements as @fastify/auth sees them: any one requirement may
// pass (OR), and every scheme inside it must (AND). `security: []` means a public operation.
export function authenticationHook (
  app: FastifyInstance,
  document: OpenApiDocument,
  entry: OperationEntry,
  securityHandlers: Readonly<Record<string, SecurityHandler>>
): onRequestHookHandler | undefined {
  const requirements = securityOf(document, entry.operation)
  if (requirements.length === 0 || requirements.some((requirement) => Object.keys(requirement).length === 0)) {
    return undefined
  }
  const alternatives = requirements.map((requirement) => Object.keys(requirement).map((scheme) => {
    const handler = securityHandlers[scheme]
    if (handler === undefined) throw new Error(`${describeOperation(entry)} requires security scheme ${scheme}, which has no handler`)
    return handler
  }))
  const [onlyAlternative] = alternatives
  // One scheme alone (the usual case) needs no composing: its handler is the hook.
  if (alternatives.length === 1 && onlyAlternative?.length === 1) return onlyAlternative[0] as onRequestHookHandler
  return app.auth(alternatives)
}
