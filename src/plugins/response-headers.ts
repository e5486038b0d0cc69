import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { commonResponseHeaders } from '../http/error-response.js'

async function responseHeaders (app: FastifyInstance): Promise<void> {
  // A callback, not an async hook: that would cost a promise on every response.
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.headers(commonResponseHeaders(request.id))
    done(null, payload)
  })
}

export default fp(responseHeaders, { name: 'response-headers', fastify: '5.x' })
