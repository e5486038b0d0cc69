import type { FastifyRequest } from 'fastify'
import { InsufficientScopeError } from '../errors/credential-errors.js'
import type { SecurityRequirement } from '../openapi/openapi-document.js'
import type { BearerCredentials, Decided } from './bearer-credentials.js'
import { missingRoles } from './identity.js'

// Decides whether a request may call an operation; sets request.identity when it may.
export type Authenticate = (request: FastifyRequest, decided: Decided) => void

export interface OperationAuthenticator {
  readonly authenticate: Authenticate
  // The schemes it checks, for its trace span.
  readonly schemeNames: string
  // Whether a requirement names roles, so that a valid token may get a 403.
  readonly checksRoles: boolean
}

// RFC 6749's scope-token: what a role name may hold, so that a 403's challenge can list it.
const roleName = /^[\x21\x23-\x5B\x5D-\x7E]+$/

// Who may call one operation, from its security requirements in openapi.yaml: any one
// requirement may be met (OR), and a requirement is met when every scheme it names accepts the
// request's credentials (AND) and the credentials hold every role the scheme's list names
// (`bearerAuth: [plants:write]`; a 403 otherwise). Undefined for a public operation
// (`security: []`, or a requirement that names nothing). A scheme the service has no credentials
// for stops start-up rather than leave the operation open.
export function operationAuthenticator (
  requirements: readonly SecurityRequirement[],
  schemes: Readonly<Record<string, BearerCredentials>>,
  operationName: string
): OperationAuthenticator | undefined {
  if (requirements.length === 0 || requirements.some((requirement) => Object.keys(requirement).length === 0)) return undefined
  const alternatives = requirements.map((requirement) => allOf(Object.entries(requirement).map(([name, roles]) => {
    const scheme = schemes[name]
    if (scheme === undefined) throw new Error(`${operationName} requires security scheme ${name}, which this service cannot check`)
    const invalid = roles.filter((role) => !roleName.test(role))
    if (invalid.length > 0) throw new Error(`${operationName} names roles that are not scope tokens (RFC 6749): ${invalid.join(', ')}`)
    return roles.length === 0 ? scheme.check : holdingRoles(scheme.check, roles)
  })))
  const schemeNames = [...new Set(requirements.flatMap((requirement) => Object.keys(requirement)))].join(' ')
  const checksRoles = requirements.some((requirement) => Object.values(requirement).some((roles) => roles.length > 0))
  return { authenticate: anyOf(alternatives), schemeNames, checksRoles }
}

// A scheme's check, then the roles its requirement names: every one of them must be held.
function holdingRoles (check: Authenticate, roles: readonly string[]): Authenticate {
  return function checkThenHoldRoles (request, decided) {
    check(request, (failure) => {
      if (failure !== undefined || request.identity === null) decided(failure)
      else decided(missingRoles(request.identity, roles).length === 0 ? undefined : new InsufficientScopeError(roles))
    })
  }
}

// The first failure stops the rest.
function allOf (checks: readonly Authenticate[]): Authenticate {
  if (checks.length === 1) return checks[0]!
  return function allSchemes (request, decided) {
    let next = 0
    const step: Decided = (failure) => {
      if (failure !== undefined || next === checks.length) decided(failure)
      else checks[next++]!(request, step)
    }
    step()
  }
}

// The first success stops the rest; when none succeeds, the first alternative's refusal is the
// answer, as the spec lists it first.
function anyOf (checks: readonly Authenticate[]): Authenticate {
  if (checks.length === 1) return checks[0]!
  return function anyRequirement (request, decided) {
    let next = 0
    let firstFailure: Error | undefined
    const step: Decided = (failure) => {
      if (failure === undefined) {
        decided()
        return
      }
      firstFailure ??= failure
      if (next === checks.length) decided(firstFailure)
      else checks[next++]!(request, step)
    }
    checks[next++]!(request, step)
  }
}
