/**
 * Checks of an OpenAPI 3.0 document written for the tests: its structure (what a validator of
 * the specification checks first: paths, operations, parameters, responses, references), and
 * whether a value conforms to one of its schemas (the subset of JSON Schema the service uses:
 * $ref, oneOf, nullable, type, enum, pattern, required, properties, additionalProperties, items).
 */
type Json = Record<string, unknown>

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

/** `#/a/b` in `doc`, or undefined */
export function resolvePointer(doc: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined
  return ref
    .slice(2)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((o, part) => (o !== null && typeof o === 'object' ? (o as Json)[part] : undefined), doc)
}

function collectRefs(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) collectRefs(v, out)
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v)
      else collectRefs(v, out)
    }
  }
  return out
}

/** Every structural problem of `doc` as an OpenAPI 3.0 document; empty when none. */
export function openApiProblems(doc: Json): string[] {
  const problems: string[] = []
  const problem = (where: string, what: string) => problems.push(`${where}: ${what}`)
  if (typeof doc.openapi !== 'string' || !/^3\.0\.\d+$/.test(doc.openapi)) problem('openapi', 'must be 3.0.x')
  const info = doc.info as Json | undefined
  if (typeof info?.title !== 'string' || typeof info.version !== 'string') problem('info', 'needs title and version')
  const paths = doc.paths as Record<string, Json> | undefined
  if (paths === undefined || typeof paths !== 'object') return [...problems, 'paths: missing']
  const components = (doc.components ?? {}) as Json
  const schemes = (components.securitySchemes ?? {}) as Json
  const declaredTags = new Set(((doc.tags ?? []) as Json[]).map((t) => t.name))
  const operationIds = new Set<string>()

  for (const [path, item] of Object.entries(paths)) {
    if (!path.startsWith('/')) problem(path, 'a path must start with /')
    const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1])
    for (const [method, op] of Object.entries(item)) {
      const where = `${method.toUpperCase()} ${path}`
      if (method === 'servers' || method === 'parameters' || method === 'summary' || method === 'description') continue
      if (!METHODS.includes(method)) {
        problem(where, 'not an HTTP method')
        continue
      }
      const operation = op as Json
      if (typeof operation.operationId === 'string') {
        if (operationIds.has(operation.operationId)) problem(where, `operationId ${operation.operationId} is not unique`)
        operationIds.add(operation.operationId)
      }
      for (const tag of (operation.tags ?? []) as string[]) if (!declaredTags.has(tag)) problem(where, `tag ${tag} is not declared`)
      const parameters = (operation.parameters ?? []) as Json[]
      for (const name of templated) {
        const p = parameters.find((x) => x.in === 'path' && x.name === name)
        if (p === undefined) problem(where, `path parameter ${name} is not declared`)
        else if (p.required !== true) problem(where, `path parameter ${name} must be required`)
      }
      for (const p of parameters) {
        if (typeof p.name !== 'string' || !['path', 'query', 'header', 'cookie'].includes(String(p.in))) problem(where, 'a parameter needs name and in')
        if (p.in === 'path' && !templated.includes(String(p.name))) problem(where, `path parameter ${String(p.name)} is not in the path`)
        if (p.schema === undefined && p.content === undefined) problem(where, `parameter ${String(p.name)} has no schema`)
      }
      const body = operation.requestBody as Json | undefined
      if (body !== undefined) {
        const content = body.content as Record<string, Json> | undefined
        if (content === undefined || Object.keys(content).length === 0) problem(where, 'requestBody without content')
        for (const [type, media] of Object.entries(content ?? {})) if (media.schema === undefined) problem(where, `requestBody ${type} has no schema`)
      }
      const responses = operation.responses as Record<string, Json> | undefined
      if (responses === undefined || Object.keys(responses).length === 0) {
        problem(where, 'no responses')
        continue
      }
      for (const [status, response] of Object.entries(responses)) {
        if (status !== 'default' && !/^[1-5](\d\d|XX)$/.test(status)) problem(where, `response key ${status} is not a status code`)
        if (typeof response.description !== 'string' || response.description === '') problem(where, `response ${status} has no description`)
        for (const [type, media] of Object.entries((response.content ?? {}) as Record<string, Json>)) {
          if (media.schema === undefined) problem(where, `response ${status} ${type} has no schema`)
        }
      }
      for (const requirement of (operation.security ?? []) as Json[]) {
        for (const name of Object.keys(requirement)) if (schemes[name] === undefined) problem(where, `security scheme ${name} is not declared`)
      }
    }
  }
  for (const ref of collectRefs(doc)) {
    if (!ref.startsWith('#/components/')) problem(ref, 'references must point into #/components/')
    else if (resolvePointer(doc, ref) === undefined) problem(ref, 'dangling reference')
  }
  return problems
}

/** Why `value` does not conform to `schema` (references resolved in `doc`); empty when it does. */
export function schemaViolations(doc: unknown, schema: Json, value: unknown, path = '$'): string[] {
  if (typeof schema.$ref === 'string') {
    const target = resolvePointer(doc, schema.$ref)
    return target === undefined ? [`${path}: dangling ${schema.$ref}`] : schemaViolations(doc, target as Json, value, path)
  }
  if (value === null) return schema.nullable === true ? [] : [`${path}: null not allowed`]
  if (Array.isArray(schema.oneOf)) {
    const matching = (schema.oneOf as Json[]).filter((s) => schemaViolations(doc, s, value, path).length === 0)
    if (matching.length !== 1) return [`${path}: matches ${matching.length} of oneOf`]
  }
  const errors: string[] = []
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) errors.push(`${path}: ${JSON.stringify(value)} not in enum`)
  switch (schema.type) {
    case 'object': {
      if (typeof value !== 'object' || Array.isArray(value)) return [`${path}: expected object`]
      const obj = value as Json
      const props = (schema.properties ?? {}) as Record<string, Json>
      for (const r of (schema.required ?? []) as string[]) if (!(r in obj)) errors.push(`${path}.${r}: required`)
      for (const [k, v] of Object.entries(obj)) {
        if (props[k] !== undefined) errors.push(...schemaViolations(doc, props[k], v, `${path}.${k}`))
        else if (schema.additionalProperties === false) errors.push(`${path}.${k}: not allowed`)
        else if (typeof schema.additionalProperties === 'object') errors.push(...schemaViolations(doc, schema.additionalProperties as Json, v, `${path}.${k}`))
      }
      break
    }
    case 'array':
      if (!Array.isArray(value)) return [`${path}: expected array`]
      value.forEach((v, i) => errors.push(...schemaViolations(doc, schema.items as Json, v, `${path}[${i}]`)))
      break
    case 'string':
      if (typeof value !== 'string') return [`${path}: expected string`]
      if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern).test(value)) errors.push(`${path}: ${value} does not match ${schema.pattern}`)
      if (schema.format === 'date-time' && Number.isNaN(Date.parse(value))) errors.push(`${path}: not a date-time`)
      break
    case 'integer':
      if (!Number.isInteger(value)) errors.push(`${path}: expected integer`)
      break
    case 'number':
      if (typeof value !== 'number') errors.push(`${path}: expected number`)
      break
    case 'boolean':
      if (typeof value !== 'boolean') errors.push(`${path}: expected boolean`)
      break
  }
  return errors
}
