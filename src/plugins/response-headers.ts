import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

// Headers every response carries, errors included: nosniff, so a browser never reads a JSON
// error as HTML, and the request id, so a caller can quote it when reporting a problem.
async function responseHeaders (app: FastifyInstance): Promise<void> {
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-content-type-options', 'nosniff')
    reply.header('x-request-id', request.id)
  })
}

export default fp(responseHeaders, { name: 'response-headers', fastify: '5.x' })
