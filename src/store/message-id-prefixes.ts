import { randomBytes } from 'node:crypto'

// The random prefixes of bundled messages' ids (bundledMessageId in src/store/outbox.ts), 12
// random bytes each, taken from a pool filled 256 at a time: a call to randomBytes for each
// bundle cost a create almost a microsecond (a bundle holds the few creates of one batch).
const prefixBytes = 12
const prefixesPerFill = 256

export class MessageIdPrefixes {
  private pool = Buffer.alloc(0)
  private offset = 0

  next (): string {
    if (this.offset >= this.pool.length) {
      this.pool = randomBytes(prefixBytes * prefixesPerFill)
      this.offset = 0
    }
    const prefix = this.pool.toString('hex', this.offset, this.offset + prefixBytes)
    this.offset += prefixBytes
    return prefix
  }
}
