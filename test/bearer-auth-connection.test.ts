import { Agent, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { buildTestApp, otherTestToken, testToken } from './support/helper.js'

// An accepted Authorization header is remembered per connection; nothing else may be, so every
// other header still gets the full check, whatever was accepted before on that connection.
t.test('on one keep-alive connection, each request is judged on its own Authorization header', async (t) => {
  const { app } = await buildTestApp(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  let id = 0
  const post = async (authorization: string | undefined): Promise<{ status: number, reused: boolean, error?: number }> =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({ id: ++id, name: 'Fern' })
      const sent = request({
        agent,
        port,
        host: '127.0.0.1',
        method: 'POST',
        path: '/plants',
        headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) },
      }, (response) => {
        let text = ''
        response.on('data', (chunk: Buffer) => { text += chunk.toString() })
        response.on('end', () => resolve({
          status: response.statusCode ?? 0,
          reused: sent.reusedSocket,
          ...(response.statusCode === 200 ? {} : { error: (JSON.parse(text) as { error: number }).error }),
        }))
      })
      sent.on('error', reject)
      sent.end(body)
    })

  t.match(await post(`Bearer ${testToken}`), { status: 200, reused: false }, 'first request: accepted')
  t.match(await post(`Bearer ${testToken}`), { status: 200, reused: true }, 'the same header again')
  // A refusal closes the connection (its body is not read), so each is sent on a connection
  // that has just had the token accepted.
  const refusals: Array<[string | undefined, number, number, string]> = [
    [`Bearer ${testToken}x`, 401, 40102, 'a longer token'],
    [`Bearer ${testToken.slice(0, -1)}`, 401, 40102, 'a shorter token'],
    [`Bearer ${testToken.slice(0, -1)}X`, 401, 40102, 'one character off'],
    [undefined, 401, 40101, 'no header'],
    [`Basic ${testToken}`, 401, 40101, 'another scheme'],
    [`Bearer ${testToken} extra`, 400, 40006, 'malformed'],
  ]
  for (const [authorization, status, error, label] of refusals) {
    t.match(await post(`Bearer ${testToken}`), { status: 200 }, `${label}: accepted first`)
    t.match(await post(authorization), { status, error, reused: true }, `${label}: then refused on the same connection`)
  }
  t.match(await post(`Bearer ${testToken}`), { status: 200 }, 'accepted')
  t.match(await post(`bearer  ${testToken}`), { status: 200, reused: true }, 'another spelling of the accepted token')
  t.match(await post(`Bearer ${otherTestToken}`), { status: 200, reused: true }, 'another accepted token')
  t.match(await post(`Bearer ${testToken}`), { status: 200, reused: true }, 'and the first one again')
})
