import { type Answer, describeAnswer, type Outcome, outcomeOf, type Plant } from './plant-requests.js'
import type { SeededRandom } from './seeded-random.js'

// Beyond 2^53, so an id that lost a digit on its way to or from the database shows.
const firstId = 9_007_199_254_740_993n
const names = ['Monstera', 'Fern', 'Ficus «lyrata»', 'Kaktus 🌵', 'Aloe "vera"', 'Pothos\\ivy', 'Сансевиерия']
const tags = ['aroid', 'succulent', 'trailing', 'ドラセナ']
// One create in this many sends again, identically, a plant already sent: a client's retry,
// which must be answered 200 whatever became of the first attempt.
const oneReplayIn = 8

interface PlantRecord {
  readonly plant: Plant
  // A 200 came back for it: it must be stored from then on, whatever happens to the service.
  acknowledged: boolean
  // A request for it was refused or went unanswered since its last retry.
  awaitingRetry: boolean
}

// Every plant a test sent, registered before its request leaves, and what the service has
// promised about it since.
export class PlantLedger {
  private readonly records = new Map<bigint, PlantRecord>()
  private readonly sent: Plant[] = []
  private nextId = firstId
  private readonly unexpected: string[] = []

  constructor (private readonly random: SeededRandom) {}

  // A plant never sent before, or now and then one already sent.
  nextPlant (): Plant {
    if (this.sent.length > 0 && this.random.integer(1, oneReplayIn) === 1) {
      return this.sent[this.random.integer(0, this.sent.length - 1)]!
    }
    const id = this.nextId++
    const name = `${names[this.random.integer(0, names.length - 1)]} ${id - firstId}`
    const tagIndex = this.random.integer(0, tags.length * 2 - 1)
    const plant: Plant = tagIndex < tags.length ? { id, name, tag: tags[tagIndex]! } : { id, name }
    this.records.set(id, { plant, acknowledged: false, awaitingRetry: false })
    this.sent.push(plant)
    return plant
  }

  record (plant: Plant, answer: Answer): Outcome {
    const outcome = outcomeOf(plant, answer)
    const record = this.records.get(plant.id)!
    if (outcome === 'acknowledged') record.acknowledged = true
    if (outcome === 'refused' || outcome === 'unknown') record.awaitingRetry = true
    if (outcome === 'unexpected') this.unexpected.push(`plant ${plant.id}: ${describeAnswer(answer)}`)
    return outcome
  }

  // The answered retry of a plant awaiting one.
  recordRetry (plant: Plant, answer: Answer): Outcome {
    const outcome = this.record(plant, answer)
    if (outcome === 'acknowledged') this.records.get(plant.id)!.awaitingRetry = false
    return outcome
  }

  plantSent (id: bigint): Plant | undefined {
    return this.records.get(id)?.plant
  }

  acknowledgedPlants (): Plant[] {
    return [...this.records.values()].filter((record) => record.acknowledged).map((record) => record.plant)
  }

  plantsAwaitingRetry (): Plant[] {
    return [...this.records.values()].filter((record) => record.awaitingRetry).map((record) => record.plant)
  }

  // Answers that were neither a 200 with the plant, nor a 503, nor no answer at all.
  unexpectedAnswers (): readonly string[] {
    return this.unexpected
  }
}
