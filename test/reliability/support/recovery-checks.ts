import { isDeepStrictEqual } from 'node:util'
import type { Test } from 'tap'
import type { StoredPlantRow } from '../../support/stored-plants.js'
import { describeAnswer, type Plant, sendEach } from './plant-requests.js'
import type { PlantLedger } from './plant-ledger.js'

export interface RecoveryFindings {
  // Acknowledged plants missing from the database, or stored with another name or tag.
  readonly lost: number
  // Plants retried because their request went unanswered or was refused...
  readonly retried: number
  // ...and how many of those never acknowledged the database held already: their request failed
  // after their commit.
  readonly storedUnacknowledged: number
  // Whether every check of the round held.
  readonly recovered: boolean
}

export interface RecoveredService {
  readonly baseUrl: string
  readonly token: string
  // What the database really holds, read through a connection of its own.
  readonly readStoredPlants: () => Promise<StoredPlantRow[]>
}

// Shown in a failure, enough to start from.
const shownAtMost = 10
const retryConcurrency = 16

// After a crash and recovery, what the database holds against what was promised: every
// acknowledged plant stored exactly; no plant that was never sent, nor one stored other than it
// was sent; and every create that was refused or went unanswered, sent again now, answered 200
// with its plant (stored before the crash, or created now), never 409 or 5xx.
export async function checkRecovery (t: Test, ledger: PlantLedger, service: RecoveredService): Promise<RecoveryFindings> {
  const stored = await service.readStoredPlants()
  const lost = lostPlants(ledger.acknowledgedPlants(), stored)
  t.same(lost.slice(0, shownAtMost), [], `every acknowledged create is stored exactly (${ledger.acknowledgedPlants().length} of them)`)
  const strangers = stored.filter((row) => !storedAsSent(ledger.plantSent(row.id), row))
  t.same(strangers.slice(0, shownAtMost), [], `the database holds only plants sent, as sent (${stored.length} rows)`)

  const toRetry = ledger.plantsAwaitingRetry()
  const storedIds = new Set(stored.map((row) => row.id))
  const acknowledgedIds = new Set(ledger.acknowledgedPlants().map((plant) => plant.id))
  const storedUnacknowledged = toRetry.filter((plant) => storedIds.has(plant.id) && !acknowledgedIds.has(plant.id)).length
  const answers = await sendEach(service.baseUrl, service.token, toRetry, retryConcurrency)
  const failedRetries = toRetry.flatMap((plant, index) =>
    ledger.recordRetry(plant, answers[index]!) === 'acknowledged' ? [] : [`plant ${plant.id}: ${describeAnswer(answers[index]!)}`])
  t.same(failedRetries.slice(0, shownAtMost), [], `each of the ${toRetry.length} unanswered or refused creates, sent again, gets 200 and its plant`)

  const lostAfterRetries = lostPlants(ledger.acknowledgedPlants(), await service.readStoredPlants())
  t.same(lostAfterRetries.slice(0, shownAtMost), [], 'and every plant acknowledged by now is stored exactly')
  t.same(ledger.unexpectedAnswers().slice(0, shownAtMost), [], 'every answer was a 200 with the plant, a 503, or none at all')

  const recovered = lost.length === 0 && strangers.length === 0 && failedRetries.length === 0 &&
    lostAfterRetries.length === 0 && ledger.unexpectedAnswers().length === 0
  return { lost: lost.length + lostAfterRetries.length, retried: toRetry.length, storedUnacknowledged, recovered }
}

function lostPlants (acknowledged: readonly Plant[], stored: readonly StoredPlantRow[]): string[] {
  const storedById = new Map(stored.map((row) => [row.id, row]))
  return acknowledged.flatMap((plant) => {
    const row = storedById.get(plant.id)
    if (storedAsSent(plant, row)) return []
    return [`plant ${plant.id} ${JSON.stringify(plant.name)}: ${row === undefined ? 'missing' : `stored as ${JSON.stringify(row.name)}, tag ${JSON.stringify(row.tag)}`}`]
  })
}

// The row holds the plant's name and tag and nothing else.
function storedAsSent (plant: Plant | undefined, row: StoredPlantRow | undefined): boolean {
  if (plant === undefined || row === undefined) return false
  return isDeepStrictEqual({ ...row }, { id: plant.id, name: plant.name, tag: plant.tag ?? null })
}
