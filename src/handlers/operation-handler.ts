import type { FastifyReply, FastifyRequest } from 'fastify'
import type { operations } from '../../generated/openapi.js'

type JsonRequestBody<Operation> =
  Operation extends { requestBody: { content: { 'application/json': infer Body } } } ? Body : undefined

type PathParameters<Operation> =
  Operation extends { parameters: { path: infer Path } } ? Path : Record<string, never>

// A JSON body is the data the spec's schema describes, which Fastify serialises, or that data
// already written as JSON (a stored document, or a fixed document serialised at start-up), sent
// as it is. Any other media type (a YAML document, a page, a script) is the text or bytes
// themselves, which the handler writes as they are. An operation without a 200 (a redirect)
// answers through the reply, and returns it.
type SuccessBody<Operation> =
  Operation extends { responses: { 200: { content: infer Content } } }
    ? Content extends { 'application/json': infer Json } ? Json | JsonText<Json> : string | Buffer
    : FastifyReply

// JSON known to hold a Body: a stored document, which passed the spec's schema on its way in, or
// a fixed document's bytes.
export type JsonText<Body> = (string | Buffer) & { readonly jsonTextOf?: Body }

// Sends JSON as the response body as it is, without parsing it again to serialise it.
export function sendJsonText<Body> (reply: FastifyReply, text: string | Buffer): JsonText<Body> {
  reply.type('application/json; charset=utf-8')
  return text
}

// A handler typed from the generated operation: it receives the request body and path
// parameters the spec declares and must resolve to the spec's 200 body. Failures are thrown and
// answered by the error handler.
export type OperationHandler<Operation> = (
  request: FastifyRequest<{ Body: JsonRequestBody<Operation>, Params: PathParameters<Operation> }>,
  reply: FastifyReply,
) => Promise<SuccessBody<Operation>>

// One handler per operationId of openapi.yaml: a missing, extra or mistyped one fails to compile.
export type OperationHandlers = {
  [OperationId in keyof operations]: OperationHandler<operations[OperationId]>
}
