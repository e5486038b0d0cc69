import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { sendError } from '../http/error-response.js'

// Every failure, from validation to storage, leaves through this handler as the spec's Error
// body with a status the spec declares.
async function errorResponses (app: FastifyInstance): Promise<void> {
  app.setErrorHandler(async (error, request, reply) => sendError(error, request, reply))
}

export default fp(errorResponses, { name: 'error-responses', fastify: '5.x' })
