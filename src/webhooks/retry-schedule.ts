// When each attempt of a message is made, as Standard Webhooks advises: the first at once, then
// 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h after the attempt before it.
// WEBHOOK_RETRY_SCHEDULE (comma-separated seconds) replaces the list: its first entry is the
// wait before the first attempt, and its length the number of attempts.
export const standardRetrySchedule = '0,5,300,1800,7200,18000,36000,50400,72000,86400'

// Each wait but an immediate one is spread by up to 10% either way, so that the messages of a
// receiver that came back are not all retried in the same instant.
const jitter = 0.1

export class RetrySchedule {
  private readonly delaysMs: readonly number[]

  constructor (schedule: string, private readonly random: () => number = Math.random) {
    this.delaysMs = schedule.split(',').map((seconds) => Math.round(Number(seconds) * 1000))
  }

  get attempts (): number {
    return this.delaysMs.length
  }

  // When a new message's first attempt is due.
  firstAttemptAt (committedAt: number): number {
    return committedAt + this.delaysMs[0]!
  }

  // When the attempt after `attemptsMade` failed ones is due, or null when none is left.
  nextAttemptAt (attemptsMade: number, now: number): number | null {
    const delay = this.delaysMs[attemptsMade]
    if (delay === undefined) return null
    return now + Math.round(delay * (1 + jitter * (2 * this.random() - 1)))
  }

  // How long an endpoint whose attempts have failed `failures` times in a row rests before it is
  // tried again: the schedule's wait after as many attempts, its last one beyond.
  restAfter (failures: number): number {
    return this.delaysMs[Math.min(failures, this.delaysMs.length - 1)]!
  }
}
