// What the server is answering: requests answered since it started, and requests read and not
// yet answered (src/webhooks/delivery-pacer.ts gives way to them).
export interface RequestLoad {
  readonly answered: () => number
  readonly waiting: () => number
}
