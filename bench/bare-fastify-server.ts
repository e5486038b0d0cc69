import Fastify from 'fastify'

// The ceiling the service is measured against: a bare Fastify POST route with a JSON schema for
// the same body, no authentication, no logging and no store. Listens on HOST:PORT.
const app = Fastify({ logger: false })

app.post('/plants', {
  schema: {
    body: {
      type: 'object',
      required: ['id', 'name'],
      properties: { id: { type: 'integer' }, name: { type: 'string' }, tag: { type: 'string' } },
    },
    response: {
      200: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, tag: { type: 'string' } } },
    },
  },
}, async (request) => {
  const { name, tag } = request.body as { name: string, tag?: string }
  return tag === undefined ? { name } : { name, tag }
})

await app.listen({ port: Number(process.env.PORT), host: process.env.HOST ?? '127.0.0.1' })
process.once('SIGTERM', () => {
  void app.close().then(() => process.exit(0))
})
