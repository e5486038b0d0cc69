import { AsyncLocalStorage } from 'node:async_hooks'
import { type Context, type ContextManager, ROOT_CONTEXT } from '@opentelemetry/api'

// The active OpenTelemetry context follows the asynchronous flow of each request, so that what a
// request starts (a store write) knows the span it belongs to. OpenTelemetry's own manager of
// this kind ships in a package this service does not otherwise need; this is all of it it uses.
export class AsyncLocalContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>()

  active (): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>> (
    context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A
  ): ReturnType<F> {
    return this.#storage.run(context, () => fn.apply(thisArg, args))
  }

  bind<T> (context: Context, target: T): T {
    if (typeof target !== 'function') return target
    const storage = this.#storage
    return function bound (this: unknown, ...args: unknown[]) {
      return storage.run(context, () => target.apply(this, args))
    } as T
  }

  enable (): this {
    return this
  }

  disable (): this {
    this.#storage.disable()
    return this
  }
}
