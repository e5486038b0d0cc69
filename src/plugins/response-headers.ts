import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { commonResponseHeaders } from '../http/common-headers.js'

async function responseHeaders (app: FastifyInstance): Promise<void> {
  app.addHook('onSend', async (request, reply) => {
    reply.headers(commonResponseHeaders(request.id))
  })
}

export default fp(responseHeaders, { name: 'response-headers', fastify: '5.x' })
