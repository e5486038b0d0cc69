// A consumer of the generated TypeScript (fetch) client (sdk/typescript) against a live service.
// Reads PLANT_STORE_URL, PLANT_STORE_TOKEN and PLANT_STORE_READ_TOKEN (a token that may only
// read), sends the round trip that every SDK's consumer sends (test/sdk/round-trips.ts says what
// each answer must be) and prints what it saw as one JSON object. Last, it registers a webhook
// endpoint (a receiver of its own on 127.0.0.1) and verifies what it receives with the Standard
// Webhooks library from npm.
import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  type ApiResponse, Configuration, ModelErrorFromJSON, NewPlantEventFromJSON, OperationsApi, PlantsApi, ResponseError, type StoredPlant,
  WebhooksApi,
} from 'plant-store-client'
import { Webhook } from 'standardwebhooks'

const basePath = process.env.PLANT_STORE_URL
const accessToken = process.env.PLANT_STORE_TOKEN
const plants = new PlantsApi(new Configuration({ basePath, accessToken }))
const anonymous = new Configuration({ basePath })

// The client's ids are JavaScript numbers: the nearest double is all that can be sent.
const largestInt64 = Number(2n ** 63n - 1n)
const smallestInt64 = Number(-(2n ** 63n))
const beyondDoubles = Number(2n ** 53n + 1n)

// The client leaves an error's body unread; the spec's Error model reads it.
async function failureOf (failure: unknown): Promise<object> {
  if (!(failure instanceof ResponseError)) throw failure
  return { status: failure.response.status, error: ModelErrorFromJSON(await failure.response.json()) }
}

async function create (api: PlantsApi, id: number, name: string, tag?: string): Promise<object> {
  try {
    const answer = await api.createPlantRaw({ newPlant: { id, name, ...(tag === undefined ? {} : { tag }) } })
    return { status: answer.raw.status, plant: await answer.value() }
  } catch (failure) {
    return failureOf(failure)
  }
}

// A page of plants: its ids (as text) and the next page's Link, if any.
async function page (answer: ApiResponse<StoredPlant[]>): Promise<{ status: number, ids: string[], next: string | null }> {
  const next = /^<([^>]*)>; rel="next"$/.exec(answer.raw.headers.get('link') ?? '')?.[1] ?? null
  return { status: answer.raw.status, ids: (await answer.value()).map(({ id }) => String(id)), next }
}

// The page a Link points at, asked for through the client with its limit and after.
async function nextPage (api: PlantsApi, link: string | null): Promise<object> {
  const query = new URL(link ?? '', 'http://localhost').searchParams
  return page(await api.listPlantsRaw({ limit: Number(query.get('limit')), after: Number(query.get('after')) }))
}

async function update (api: PlantsApi, id: number, name: string, tag?: string, ifMatch?: string): Promise<object> {
  try {
    const answer = await api.updatePlantRaw({ id, plant: { name, ...(tag === undefined ? {} : { tag }) }, ...(ifMatch === undefined ? {} : { ifMatch }) })
    return { status: answer.raw.status, plant: await answer.value() }
  } catch (failure) {
    return failureOf(failure)
  }
}

async function remove (api: PlantsApi, id: number): Promise<number | object> {
  try {
    return (await api.deletePlantRaw({ id })).raw.status
  } catch (failure) {
    return failureOf(failure)
  }
}

const seen = {
  create: await create(plants, 10, 'Monstera', 'aroid'),
  replay: await create(plants, 10, 'Monstera', 'aroid'),
  conflict: await create(plants, 10, 'Fern'),
  missingToken: await create(new PlantsApi(anonymous), 11, 'Fern'),
  largestId: await create(plants, largestInt64, 'Largest'),
  smallestId: await create(plants, smallestInt64, 'Smallest'),
  beyondDoubles: await create(plants, beyondDoubles, 'Aloe'),
  health: (await new OperationsApi(anonymous).getHealth()).status,
}
const firstPage = await page(await plants.listPlantsRaw({ limit: 1 }))
const reader = new PlantsApi(new Configuration({ basePath, accessToken: process.env.PLANT_STORE_READ_TOKEN }))
const paged = {
  firstPage,
  secondPage: await nextPage(plants, firstPage.next),
  updated: await update(plants, 10, 'Monstera', 'climber'),
  staleUpdate: await update(plants, 10, 'Monstera', undefined, '"stale"'),
  updateMissing: await update(plants, 11, 'Fern'),
  deleted: await remove(plants, 10),
  deletedAgain: await remove(plants, 10),
  forbidden: await create(reader, 12, 'Fern'),
}

// Registers a receiver for newPlant, creates a plant, and verifies the delivery it gets.
async function webhook (configuration: Configuration): Promise<object> {
  const server = createServer().listen(0, '127.0.0.1')
  const delivery = new Promise<{ headers: IncomingHttpHeaders, body: string }>((resolve) => {
    server.on('request', (request, response) => {
      let body = ''
      request.setEncoding('utf8').on('data', (chunk: string) => { body += chunk }).on('end', () => {
        response.writeHead(204).end()
        resolve({ headers: request.headers, body })
      })
    })
  })
  await once(server, 'listening')
  const webhooks = new WebhooksApi(configuration)
  const registered = await webhooks.createWebhookEndpointRaw({
    newWebhookEndpoint: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, events: new Set(['newPlant']) },
  })
  const endpoint = await registered.value()
  await new PlantsApi(configuration).createPlant({ newPlant: { id: 20, name: 'Webhook fern' } })
  const { headers, body } = await delivery
  // Throws unless the signature is the endpoint secret's.
  const event = new Webhook(endpoint.secret).verify(body, headers as Record<string, string>) as { type: string, data: { name: string } }
  const seen = {
    registered: registered.raw.status,
    listed: (await webhooks.listWebhookEndpoints()).map(({ state }) => state),
    type: event.type,
    plant: event.data.name,
    sameAsModel: NewPlantEventFromJSON(JSON.parse(body)).data.name,
    deleted: (await webhooks.deleteWebhookEndpointRaw({ id: endpoint.id })).raw.status,
  }
  await remove(new PlantsApi(configuration), 20)
  server.close()
  return seen
}

process.stdout.write(`${JSON.stringify({ ...seen, ...paged, webhook: await webhook(new Configuration({ basePath, accessToken })) })}\n`)
