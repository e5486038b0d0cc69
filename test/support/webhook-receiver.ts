import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'

export interface ReceivedWebhook {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly receivedAt: number
}

export interface Reply { status: number, headers?: Record<string, string> }

// How the receiver answers a delivery: a status (200 by default) and headers, at once or once a
// promise settles, or never.
export type Answer = (received: ReceivedWebhook) => Reply | Promise<Reply> | 'hang'

export interface WebhookReceiver {
  // http://127.0.0.1:<port>
  readonly url: string
  readonly received: ReceivedWebhook[]
  answer: Answer
  // Resolves once `count` deliveries have arrived, or rejects after `timeoutMs`.
  waitFor (count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>
  close (): Promise<void>
}

// A local receiver of webhooks on 127.0.0.1, the only address the tests send to; closed when
// the test ends.
export async function startWebhookReceiver (t: Test, answer: Answer = () => ({ status: 200 })): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = []
  const hanging = new Set<ServerResponse>()
  let waiters: Array<() => void> = []
  const receiver: WebhookReceiver = {
    url: '',
    received,
    answer,
    async waitFor (count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`${received.length} of ${count} webhooks arrived within ${timeoutMs} ms`)
        await new Promise<void>((resolve) => {
          waiters.push(resolve)
          setTimeout(resolve, 50)
        })
      }
      return received.slice(0, count)
    },
    async close () {
      for (const response of hanging) response.destroy()
      server.closeAllConnections()
      server.close()
    },
  }
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const delivery = { path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), receivedAt: Date.now() }
      received.push(delivery)
      const wake = waiters
      waiters = []
      for (const resolve of wake) resolve()
      const reply = receiver.answer(delivery)
      if (reply === 'hang') {
        hanging.add(response)
        return
      }
      if (reply instanceof Promise) {
        hanging.add(response)
        void reply.then(({ status, headers }) => {
          hanging.delete(response)
          if (!response.destroyed) response.writeHead(status, headers).end()
        }, () => response.destroy())
        return
      }
      response.writeHead(reply.status, reply.headers).end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  Object.assign(receiver, { url: `http://127.0.0.1:${port}` })
  t.teardown(() => receiver.close())
  return receiver
}
