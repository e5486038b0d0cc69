import type { FastifyReply, FastifyRequest } from 'fastify'
import type { operations } from '../../generated/openapi.js'
import type { ApiError } from '../errors/api-errors.js'

type JsonRequestBody<Operation> =
  Operation extends { requestBody: { content: { 'application/json': infer Body } } } ? Body : undefined

type PathParameters<Operation> =
  Operation extends { parameters: { path: infer Path } } ? Path : Record<string, never>

// Header parameters by the lower-case names Node gives every header (`if-match` for If-Match).
type HeaderParameters<Operation> =
  Operation extends { parameters: { header?: infer Header } }
    ? ([Header] extends [never] ? unknown : { [Name in keyof NonNullable<Header> as Lowercase<Name & string>]?: NonNullable<Header>[Name] })
    : unknown

type QueryParameters<Operation> =
  Operation extends { parameters: { query?: infer Query } } ? ([Query] extends [never] ? Record<string, never> : NonNullable<Query>) : Record<string, never>

// The generated types give an int64 as `bigint | number`; a handler receives it decoded, as the
// exact bigint it stands for (src/openapi/request-decoder.ts), so that its type and value agree.
export type Decoded<T> =
  [bigint | number] extends [T] ? Exclude<T, number> : T extends object ? { [Key in keyof T]: Decoded<T[Key]> } : T

type DeclaredStatus<Operation> = Operation extends { responses: infer Responses } ? keyof Responses : never

// A failure a handler answers with: an ApiError whose status the operation declares (getPlant's
// 404, createPlant's 409). Returning one of a status the operation does not declare fails to
// compile. Failures every operation of a kind may meet (a 503 from the store, a 500) are not
// the handler's to answer: they are thrown, and src/http/to-api-error.ts maps them.
export type DeclaredRefusal<Operation> = ApiError<Exclude<Extract<DeclaredStatus<Operation>, number>, 200 | 201>>

declare const redirectStatus: unique symbol

// The reply, sent as a redirect of a status the operation declares (getRoot's 302).
export type Redirected<Status extends number> = FastifyReply & { readonly [redirectStatus]: Status }

export function redirect<Status extends number> (reply: FastifyReply, location: string, status: Status): Redirected<Status> {
  return reply.redirect(location, status) as Redirected<Status>
}

declare const createdStatus: unique symbol

// The body, sent as the 201 the operation declares (createWebhookEndpoint's).
export type Created<Body> = NotARefusal<Body> & { readonly [createdStatus]: true }

export function created<Body> (reply: FastifyReply, body: Body): Created<Body> {
  reply.code(201)
  return body as Created<Body>
}

declare const noBody: unique symbol

// The reply, sent as the 204 the operation declares (deletePlant's).
export type NoContent = FastifyReply & { readonly [noBody]: true }

export function noContent (reply: FastifyReply): NoContent {
  return reply.code(204).send() as NoContent
}

// A JSON body is the data the spec's schema describes, which Fastify serialises, or that data
// already written as JSON (a stored document, or a fixed document serialised at start-up), sent
// as it is. Any other media type (a YAML document, a page, a script) is the text or bytes
// themselves, which the handler writes as they are. An operation that creates answers its 201;
// one without a 200 answers its 204, or redirects.
type SuccessAnswer<Operation> =
  Operation extends { responses: { 201: { content: { 'application/json': infer Json } } } } ? Created<Json>
    : Operation extends { responses: { 200: { content: infer Content } } }
      ? Content extends { 'application/json': infer Json } ? NotARefusal<Json> | JsonText<Json> : string | Buffer
      : Operation extends { responses: { 204: unknown } } ? NoContent
        : Redirected<Extract<DeclaredStatus<Operation>, 301 | 302 | 303 | 307 | 308>>

// A body that allows any property would take an ApiError for itself (it has a `name`): this one
// cannot, so that a refusal is checked as one.
type NotARefusal<Body> = Body & { readonly statusCode?: never }

// JSON known to hold a Body: a stored document, which passed the spec's schema on its way in, or
// a fixed document's bytes.
export type JsonText<Body> = (string | Buffer) & { readonly jsonTextOf?: Body }

// Sends JSON as the response body as it is, without parsing it again to serialise it.
export function sendJsonText<Body> (reply: FastifyReply, text: string | Buffer): JsonText<Body> {
  reply.type('application/json; charset=utf-8')
  return text
}

// A handler typed from the generated operation, in the manner of oapi-codegen's strict server:
// it receives the decoded body and parameters the spec declares, and answers the spec's 200 body
// or a refusal of a status the operation declares. Fastify answers a returned ApiError as it
// does a thrown one: through the error handler, as the spec's Error body.
export type OperationHandler<Operation> = (
  request: FastifyRequest<{
    Body: Decoded<JsonRequestBody<Operation>>
    Params: Decoded<PathParameters<Operation>>
    Querystring: Decoded<QueryParameters<Operation>>
    Headers: HeaderParameters<Operation>
  }>,
  reply: FastifyReply,
) => Promise<SuccessAnswer<Operation> | DeclaredRefusal<Operation>>

// One handler per operationId of openapi.yaml: a missing, extra or mistyped one fails to compile.
export type OperationHandlers = {
  [OperationId in keyof operations]: OperationHandler<operations[OperationId]>
}
