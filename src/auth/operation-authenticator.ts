import type { FastifyReply, FastifyRequest } from 'fastify'
import type { SecurityRequirement } from '../openapi/openapi-document.js'
import type { BearerCredentials, SchemeHandler } from './bearer-credentials.js'

// Decides whether a request may call an operation, in onRequest; sets request.identity when it
// may. @fastify/auth calls `decided` with null, not nothing, when a group of schemes passes.
export type Authenticate = (request: FastifyRequest, reply: FastifyReply, decided: (failure?: Error | null) => void) => void

// @fastify/auth's composition (app.auth): the handlers of the list are alternatives, and a list
// among them a group in which each must pass, each group stopping at its first refusal.
export type ComposeAuth = (handlers: Array<SchemeHandler | SchemeHandler[]>, options: { relation: 'or' }) => Authenticate

export interface OperationAuthenticator {
  readonly authenticate: Authenticate
  // The schemes it checks, for its trace span.
  readonly schemeNames: string
  // Whether a requirement names roles, so that a valid token may get a 403.
  readonly checksRoles: boolean
}

// RFC 6749's scope-token: what a role name may hold, so that a 403's challenge can list it.
const roleName = /^[\x21\x23-\x5B\x5D-\x7E]+$/

// Who may call one operation, from its security requirements in openapi.yaml, composed by
// @fastify/auth as OpenAPI means them: any one requirement may be met (OR), and a requirement is
// met when every scheme it names accepts the request's credentials (AND) and the credentials hold
// every role the scheme's list names (`bearerAuth: [plants:write]`; a 403 otherwise). Undefined
// for a public operation (`security: []`, or a requirement that names nothing). A scheme the
// service has no credentials for stops start-up rather than leave the operation open.
export function operationAuthenticator (
  requirements: readonly SecurityRequirement[],
  schemes: Readonly<Record<string, BearerCredentials>>,
  operationName: string,
  compose: ComposeAuth
): OperationAuthenticator | undefined {
  if (requirements.length === 0 || requirements.some((requirement) => Object.keys(requirement).length === 0)) return undefined
  const alternatives = requirements.map((requirement) => {
    const group = Object.entries(requirement).map(([name, roles]) => {
      const scheme = schemes[name]
      if (scheme === undefined) throw new Error(`${operationName} requires security scheme ${name}, which this service cannot check`)
      const invalid = roles.filter((role) => !roleName.test(role))
      if (invalid.length > 0) throw new Error(`${operationName} names roles that are not scope tokens (RFC 6749): ${invalid.join(', ')}`)
      return scheme.holding(roles)
    })
    // A requirement of one scheme is that scheme's handler: a group costs @fastify/auth another
    // closure per request.
    return group.length === 1 ? group[0]! : group
  })
  const schemeNames = [...new Set(requirements.flatMap((requirement) => Object.keys(requirement)))].join(' ')
  const checksRoles = requirements.some((requirement) => Object.values(requirement).some((roles) => roles.length > 0))
  // When no requirement is met, @fastify/auth answers with the refusal of the last one it tried.
  // The answer is to be the refusal of the first the spec lists, the requirement a client most
  // likely meant, so the requirements are handed over last first. Within one, the schemes go in
  // the spec's order, and the first to refuse is the answer.
  return { authenticate: compose(alternatives.reverse(), { relation: 'or' }), schemeNames, checksRoles }
}
