// Delivered messages are deleted together, at most this often or once this many have gathered:
// on SQLite their commit waits for the disk (synchronous = FULL), and one commit per delivery
// cost more than the delivery itself. A crash before the deletion sends them again, with the
// same webhook-id, as at-least-once allows.
const deleteEveryMs = 100
const deleteBatch = 512

export type DeleteMessages = (seqs: readonly number[]) => Promise<void>

// The messages one endpoint's delivery has delivered and not yet deleted from the outbox. A
// deletion the store refuses keeps its messages for the next: one delivered and never deleted
// would stay counted as pending, and be sent again by the endpoint's next holder.
export class DeliveredMessages {
  private seqs: number[] = []
  private lastDeletedAt = 0
  // Whether the store refused the last deletion: the next waits for deleteEveryMs, not for a round.
  private refused = false

  constructor (
    private readonly deleteMessages: DeleteMessages,
    // Told of the messages deleted, no longer to be kept from being read again.
    private readonly deleted: (seqs: readonly number[]) => void
  ) {}

  add (seq: number): void {
    this.seqs.push(seq)
  }

  // Deletes when enough time has passed or enough have gathered (but after a refusal, only once
  // the time has passed: a store that refuses is not asked again on every round).
  async deleteDue (now: number): Promise<void> {
    const gathered = !this.refused && this.seqs.length >= deleteBatch
    if (now - this.lastDeletedAt >= deleteEveryMs || gathered) await this.deleteSome()
  }

  // Deletes deleteBatch at most: what gathered while the store refused is deleted a batch at a
  // time, not in one transaction that would hold SQLite's thread.
  private async deleteSome (): Promise<void> {
    this.lastDeletedAt = Date.now()
    if (this.seqs.length === 0) return
    const deleting = this.seqs.slice(0, deleteBatch)
    this.seqs = this.seqs.slice(deleting.length)
    try {
      await this.deleteMessages(deleting)
    } catch (error) {
      this.seqs = deleting.concat(this.seqs)
      this.refused = true
      throw error
    }
    this.refused = false
    this.deleted(deleting)
  }

  // Deletes every one, a batch at a time, until the store refuses a batch.
  async deleteAll (): Promise<void> {
    while (this.seqs.length > 0) await this.deleteSome()
  }
}
