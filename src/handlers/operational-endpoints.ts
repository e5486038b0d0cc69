import type { operations } from '../../generated/openapi.js'
import type { LoadedOpenApiDocument } from '../spec/openapi-document.js'
import type { PlantStore } from '../store/plant-store.js'
import type { OperationHandler } from './operation-handler.js'

export function getHealthHandler (): OperationHandler<operations['getHealth']> {
  return async function getHealth () {
    return { status: 'ok' }
  }
}

export function getReadinessHandler (store: PlantStore): OperationHandler<operations['getReadiness']> {
  return async function getReadiness () {
    await store.checkReady()
    return { status: 'ready' }
  }
}

export function getOpenApiJsonHandler ({ document }: LoadedOpenApiDocument): OperationHandler<operations['getOpenApiJson']> {
  return async function getOpenApiJson () {
    return document
  }
}

export function getOpenApiYamlHandler ({ yamlText }: LoadedOpenApiDocument): OperationHandler<operations['getOpenApiYaml']> {
  return async function getOpenApiYaml (request, reply) {
    reply.type('application/yaml; charset=utf-8')
    return yamlText
  }
}
