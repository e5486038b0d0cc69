import type { Database } from './sqlite-driver.js'

// Runs a transaction that commits without waiting for the disk (synchronous = NORMAL), for a
// write whose loss in a power cut undoes itself harmlessly: the next commit that waits (every
// batch of creates does) makes it durable with everything before it in the log.
export function commitWithoutFsync<T> (database: Database, transaction: () => T): T {
  database.pragma('synchronous = NORMAL')
  try {
    return transaction()
  } finally {
    // Inside a transaction left open (a failed rollback) the setting cannot change, and the
    // store takes no write until it is gone: its error is the one to tell.
    if (!database.inTransaction) database.pragma('synchronous = FULL')
  }
}
