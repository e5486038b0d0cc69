import { AjvCompiler } from '@fastify/ajv-compiler'
import type { FastifyServerOptions } from 'fastify'
import type { FastifyRouteSchemaDef, FastifySchemaValidationError } from 'fastify/types/schema.js'
import { addExactInt64Keyword } from '../int64/exact-int64-keyword.js'
import { numericParameterReader } from '../int64/numeric-parameters.js'
import { addStorableTextKeyword } from './storable-text.js'

type SchemaController = NonNullable<FastifyServerOptions['schemaController']>
type ValidatorFactory = NonNullable<NonNullable<SchemaController['compilersFactory']>['buildValidator']>

interface Validator {
  (data: unknown): unknown
  errors?: FastifySchemaValidationError[] | null
}

// What Fastify passes and expects at run time (its declared types for this hook are Ajv's).
type RouteValidatorCompiler = (route: FastifyRouteSchemaDef<unknown>) => Validator
type RouteValidatorFactory = (externalSchemas: unknown, ajvOptions: unknown) => RouteValidatorCompiler

// Fastify's own validator (Ajv, with the `ajv` options of buildApp), but parameters the spec
// declares as numbers are read from their text first, exactly (src/int64/numeric-parameters.ts):
// the validator itself converts nothing (coerceTypes is off), so that a body's "12" is not 12.
const buildValidator: RouteValidatorFactory = (externalSchemas, ajvOptions) => {
  const compile = (AjvCompiler() as unknown as RouteValidatorFactory)(externalSchemas, ajvOptions)
  return (route) => {
    const validate = compile(route.httpPart === 'headers' ? { ...route, schema: withLowerCaseNames(route.schema) } : route)
    const readNumbers = route.httpPart === 'body' ? undefined : numericParameterReader(route.schema)
    if (readNumbers === undefined) return validate
    const validateParameters: Validator = (parameters) => {
      readNumbers(parameters as Record<string, unknown>)
      const result = validate(parameters)
      validateParameters.errors = validate.errors ?? null
      return result
    }
    return validateParameters
  }
}

export const buildRequestValidator = buildValidator as unknown as ValidatorFactory

// A header parameter's schema by the lower-case name Node gives every header (`if-match` for the
// spec's If-Match). Fastify does this for its own validator, and leaves a validator of one's own
// to do it: without it a header parameter is never found, and never checked.
function withLowerCaseNames (schema: unknown): unknown {
  const { properties, required, ...rest } = schema as { properties?: Record<string, unknown>, required?: unknown }
  return {
    ...rest,
    ...(properties === undefined ? {} : { properties: Object.fromEntries(Object.entries(properties).map(([name, property]) => [name.toLowerCase(), property])) }),
    ...(Array.isArray(required) ? { required: required.map((name: string) => name.toLowerCase()) } : {}),
  }
}

// The Ajv options requests are validated with: buildApp's `ajv`, and the mock's, so that the mock
// refuses what the service refuses. The spec is exact: "12" is not an integer, 123 is not a
// string, and nothing is added to or removed from the body the handler sees. Parameters, which
// arrive as text, have their numbers read by buildRequestValidator; a boolean parameter would
// need the same.
export const exactValidationOptions = {
  customOptions: { coerceTypes: false, useDefaults: false, removeAdditional: false, allErrors: false },
  plugins: [addExactInt64Keyword, addStorableTextKeyword],
}
