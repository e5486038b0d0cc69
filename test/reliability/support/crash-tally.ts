import type { Test } from 'tap'
import type { LoadCounts } from './create-load.js'
import type { RecoveryFindings } from './recovery-checks.js'

// The figures of one backend's crash rounds, added up and shown once at the end.
export class CrashTally {
  readonly totals: LoadCounts = { sent: 0, acknowledged: 0, refused: 0, unknown: 0, unexpected: 0 }
  private retried = 0
  private storedUnacknowledged = 0
  private kills = 0
  private killsSurvived = 0
  private lost = 0

  add (counts: LoadCounts, findings: RecoveryFindings): void {
    for (const key of Object.keys(this.totals) as Array<keyof LoadCounts>) this.totals[key] += counts[key]
    this.retried += findings.retried
    this.storedUnacknowledged += findings.storedUnacknowledged
    this.kills++
    if (findings.recovered) this.killsSurvived++
    this.lost += findings.lost
  }

  report (t: Test, backend: string, extra = ''): void {
    const { sent, acknowledged, refused, unknown, unexpected } = this.totals
    t.comment(`${backend}: ${sent} requests sent, ${acknowledged} acknowledged, ${refused} refused, ${unknown} unknown, ` +
      `${unexpected} unexpected; ${this.retried} plants retried after recovery (${this.storedUnacknowledged} of them stored already, though never acknowledged); ${this.killsSurvived} of ${this.kills} kills survived; ` +
      `${this.lost} acknowledged writes lost${extra}`)
  }
}

export function describeRound (counts: LoadCounts, findings?: RecoveryFindings): string {
  const retried = findings === undefined ? '' : `; ${findings.retried} plants retried (${findings.storedUnacknowledged} stored already, though never acknowledged)`
  return `${counts.sent} sent, ${counts.acknowledged} acknowledged, ${counts.refused} refused, ${counts.unknown} unknown${retried}`
}
