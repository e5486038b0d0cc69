import { connect, type Socket } from 'node:net'

// Run as its own process (see pipelining-attack.ts), so that the attack's own work does not
// slow the test's health probe: clients that write thousands of pipelined requests in one go
// and never read the answers. Arguments: port, connections, requests per connection, the request
// as JSON text, and how long to hold the connections open in milliseconds. It says "ready" once
// started and attacks when its standard input says "go", so that its start-up is not measured.
const [port, connections, requestsPerConnection, requestJson, holdMs] = process.argv.slice(2)
const payload = Buffer.from((JSON.parse(requestJson ?? '""') as string).repeat(Number(requestsPerConnection)))
process.stdout.write('ready\n')
await new Promise((resolve) => process.stdin.once('data', resolve))
process.stdin.pause()

const sockets: Socket[] = []
await Promise.all(Array.from({ length: Number(connections) }, async () => {
  const socket = connect(Number(port), '127.0.0.1')
  sockets.push(socket)
  socket.on('error', () => {})
  await new Promise<void>((resolve) => socket.once('connect', resolve).once('error', () => resolve()))
  // Never read: the answers pile up on the service's side of the connection.
  socket.pause()
  socket.write(payload)
}))
await new Promise((resolve) => setTimeout(resolve, Number(holdMs)))
for (const socket of sockets) socket.destroy()
