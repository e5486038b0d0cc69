import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { InvalidTextError } from '../errors/api-errors.js'
import { contentTypeRefusal } from '../http/json-content-type.js'
import { parseJsonExactly } from '../json/parse-json-exactly.js'

const utf8 = new TextDecoder('utf-8', { fatal: true })

// application/json, with charset=utf-8 or none and no content coding, is the only body the
// service reads; anything else is a 415 before a byte of it is parsed. A leading UTF-8 byte
// order mark is ignored, as RFC 8259 allows. Fastify's size limit applies first.
async function jsonBody (app: FastifyInstance): Promise<void> {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const refusal = contentTypeRefusal(request.headers)
    if (refusal !== undefined) {
      done(refusal, undefined)
      return
    }
    let text: string
    try {
      text = utf8.decode(body as Buffer)
    } catch {
      done(new InvalidTextError('the body is not valid UTF-8'), undefined)
      return
    }
    try {
      done(null, parseJsonExactly(text))
    } catch (error) {
      done(error as Error, undefined)
    }
  })
}

export default fp(jsonBody, { name: 'json-body', fastify: '5.x' })
