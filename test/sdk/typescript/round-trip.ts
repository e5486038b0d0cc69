// A consumer of the generated TypeScript (fetch) client (sdk/typescript) against a live service.
// Reads PLANT_STORE_URL and PLANT_STORE_TOKEN, sends the round trip that every SDK's consumer
// sends (test/sdk/round-trips.ts says what each answer must be) and prints what it saw as one
// JSON object.
import { Configuration, ModelErrorFromJSON, OperationsApi, PlantsApi, ResponseError } from 'plant-store-client'

const basePath = process.env.PLANT_STORE_URL
const accessToken = process.env.PLANT_STORE_TOKEN
const plants = new PlantsApi(new Configuration({ basePath, accessToken }))
const anonymous = new Configuration({ basePath })

// The client's ids are JavaScript numbers: the nearest double is all that can be sent.
const largestInt64 = Number(2n ** 63n - 1n)
const smallestInt64 = Number(-(2n ** 63n))
const beyondDoubles = Number(2n ** 53n + 1n)

async function create (api: PlantsApi, id: number, name: string, tag?: string): Promise<object> {
  try {
    const answer = await api.createPlantRaw({ newPlant: { id, name, ...(tag === undefined ? {} : { tag }) } })
    return { status: answer.raw.status, plant: await answer.value() }
  } catch (failure) {
    if (!(failure instanceof ResponseError)) throw failure
    // The client leaves an error's body unread; the spec's Error model reads it.
    return { status: failure.response.status, error: ModelErrorFromJSON(await failure.response.json()) }
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
process.stdout.write(`${JSON.stringify(seen)}\n`)
