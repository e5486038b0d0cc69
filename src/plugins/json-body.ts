import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { readJsonBody } from '../http/read-json-body.js'

// application/json is the only body the service reads (src/json/read-json-body.ts says how);
// anything else is a 415. Fastify's size limit applies first.
async function jsonBody (app: FastifyInstance): Promise<void> {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      done(null, readJsonBody(request.headers, body as Buffer))
    } catch (error) {
      done(error as Error, undefined)
    }
  })
}

export default fp(jsonBody, { name: 'json-body', fastify: '5.x' })
