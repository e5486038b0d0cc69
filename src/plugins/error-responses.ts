import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { sendError } from '../http/error-response.js'

export interface ErrorResponsesOptions {
  readonly bodyLimit: number
}

// Every failure, from validation to storage, leaves through this handler as the spec's Error
// body with a status the spec declares.
async function errorResponses (app: FastifyInstance, { bodyLimit }: ErrorResponsesOptions): Promise<void> {
  app.setErrorHandler(async (error, request, reply) => sendError(error, request, reply, bodyLimit))
}

export default fp(errorResponses, { name: 'error-responses', fastify: '5.x' })
