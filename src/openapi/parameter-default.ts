import { listOperations, type OpenApiDocument, resolveLocalRef } from './openapi-document.js'

interface Parameter {
  readonly $ref?: string
  readonly name?: string
  readonly schema?: { readonly default?: unknown }
}

// The default openapi.yaml declares for an operation's parameter (the validator adds none to a
// request, as it adds nothing anywhere): undefined when there is none.
export function parameterDefault (document: OpenApiDocument, operationId: string, name: string): unknown {
  const entry = listOperations(document).find(({ operation }) => operation.operationId === operationId)
  const pathItem = document.paths[entry?.path ?? ''] as { parameters?: readonly Parameter[] } | undefined
  const parameters = [...(pathItem?.parameters ?? []), ...((entry?.operation.parameters ?? []) as readonly Parameter[])]
    .map((parameter) => (parameter.$ref === undefined ? parameter : resolveLocalRef(document, parameter.$ref)) as Parameter)
  return parameters.find((parameter) => parameter.name === name)?.schema?.default
}
