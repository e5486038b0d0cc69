// The stable values of `Error.error`, documented in openapi.yaml's description.
// The first three digits are the HTTP status; the last two tell that status's failures apart.
export const ErrorCode = {
  malformedJson: 40001,
  invalidText: 40002,
  schemaViolation: 40003,
  int64OutOfRange: 40004,
  forbiddenKey: 40005,
  malformedCredentials: 40006,
  malformedRequest: 40007,
  missingCredentials: 40101,
  invalidToken: 40102,
  notFound: 40401,
  methodNotAllowed: 40501,
  requestTimeout: 40801,
  conflict: 40901,
  contentTooLarge: 41301,
  unsupportedMediaType: 41501,
  headerFieldsTooLarge: 43101,
  internal: 50001,
  storeUnavailable: 50301,
} as const

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode]
