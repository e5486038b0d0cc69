// A command line the tool cannot run: it says why, shows the usage and exits 2, before opening
// the store.
export class UsageError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'UsageError'
  }
}
