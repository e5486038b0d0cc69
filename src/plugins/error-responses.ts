import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { NotFoundError } from '../errors/api-errors.js'
import { toApiError } from '../http/to-api-error.js'

export interface ErrorResponsesOptions {
  readonly bodyLimit: number
}

// Every failure, from validation to storage, leaves through this handler as the spec's Error
// body. 5xx details go to the log only.
async function errorResponses (app: FastifyInstance, { bodyLimit }: ErrorResponsesOptions): Promise<void> {
  app.setErrorHandler(async (error, request, reply) => {
    const apiError = toApiError(error, request, bodyLimit)
    if (apiError.statusCode >= 500) {
      request.log.error({ err: error }, 'request failed')
    } else {
      request.log.info({ status: apiError.statusCode, code: apiError.code }, apiError.message)
    }
    return reply
      .code(apiError.statusCode)
      .headers(apiError.headers)
      .type('application/json; charset=utf-8')
      .send({ error: apiError.code, message: apiError.message })
  })

  // Decided in onRequest, so an unknown path is a 404 before its body is read or refused.
  app.addHook('onRequest', async (request) => {
    if (request.is404) throw new NotFoundError(request.method, request.url)
  })
  app.setNotFoundHandler(async (request) => {
    throw new NotFoundError(request.method, request.url)
  })
}

export default fp(errorResponses, { name: 'error-responses', fastify: '5.x' })
