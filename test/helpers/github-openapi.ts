// GitHub's published OpenAPI description (from @octokit/openapi), used to check every request the
// action makes, and every answer the loopback server gives, against what api.github.com documents.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: its default export arrives wrapped under NodeNext.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
) => Ajv;

type Json = Record<string, any>;

/** A request matched to one operation of the description. */
export interface MatchedOperation {
  operationId: string;
  method: string;
  template: string;
  params: Record<string, string>;
  operation: Json;
}

interface Route {
  template: string;
  regex: RegExp;
  names: string[];
  literals: number;
  methods: Record<string, Json>;
}

const COMPONENTS_ID = 'https://api.github.com/openapi/components';

/** The api.github.com description, its path templates compiled, and validators compiled on first use. */
export class GitHubOpenApi {
  private readonly routes: Route[];
  private readonly ajv: Ajv;
  private readonly validators = new Map<string, ValidateFunction | null>();

  private constructor(readonly spec: Json) {
    this.routes = Object.entries(spec.paths as Json)
      .map(([template, item]) => {
        const names: string[] = [];
        const segments = template.split('/').map((seg) =>
          seg.replace(/\{([^}]+)\}|[^{}]+/g, (m, name) => {
            if (name) {
              names.push(name);
              return '([^/]+)';
            }
            return m.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          }),
        );
        const methods: Record<string, Json> = {};
        for (const [m, op] of Object.entries(item as Json))
          if (m !== 'parameters') methods[m.toUpperCase()] = op;
        return {
          template,
          regex: new RegExp(`^${segments.join('/')}$`),
          names,
          literals: template.split('/').filter((s) => s && !s.includes('{')).length,
          methods,
        };
      })
      // A literal segment wins over a parameter: /issues/comments/{id} before /issues/{number}.
      .sort((a, b) => b.literals - a.literals);
    this.ajv = new Ajv({ strict: false, allErrors: true, logger: false, validateFormats: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: COMPONENTS_ID, components: rebase(spec.components) });
  }

  private static cached: GitHubOpenApi | undefined;

  /** Loads the description once per process. */
  static load(): GitHubOpenApi {
    if (!GitHubOpenApi.cached) {
      const require = createRequire(import.meta.url);
      const dir = dirname(require.resolve('@octokit/openapi/package.json'));
      const spec = JSON.parse(readFileSync(join(dir, 'generated', 'api.github.com.json'), 'utf8'));
      GitHubOpenApi.cached = new GitHubOpenApi(spec);
    }
    return GitHubOpenApi.cached;
  }

  /** The operation a method and path name, or why none does. */
  match(method: string, pathname: string): MatchedOperation | { error: string } {
    let pathMatched = false;
    for (const route of this.routes) {
      const m = route.regex.exec(pathname);
      if (!m) continue;
      pathMatched = true;
      const operation = route.methods[method];
      if (!operation) continue;
      const params: Record<string, string> = {};
      route.names.forEach((name, i) => {
        params[name] = decodeURIComponent(m[i + 1]);
      });
      return { operationId: operation.operationId, method, template: route.template, params, operation };
    }
    return {
      error: pathMatched
        ? `${method} is not an operation of ${pathname} in GitHub's REST API`
        : `no path template of GitHub's REST API matches ${pathname}`,
    };
  }

  /** Every way the request departs from the operation: parameters, required body, body schema. */
  validateRequest(op: MatchedOperation, query: URLSearchParams, body: unknown, hasBody: boolean): string[] {
    const problems: string[] = [];
    const declared = new Set<string>();
    for (const raw of op.operation.parameters ?? []) {
      const p = this.deref(raw);
      if (p.in === 'query') declared.add(p.name);
      const value = p.in === 'path' ? op.params[p.name] : p.in === 'query' ? query.get(p.name) : undefined;
      if (p.in !== 'path' && p.in !== 'query') continue;
      if (value === undefined || value === null) {
        if (p.required) problems.push(`missing required ${p.in} parameter ${p.name}`);
        continue;
      }
      const check = this.validator(`param:${op.operationId}:${p.name}`, p.schema);
      const coerced = coerce(value, p.schema);
      if (check && !check(coerced))
        problems.push(`${p.in} parameter ${p.name}=${value}: ${this.ajv.errorsText(check.errors)}`);
    }
    for (const name of query.keys()) {
      if (!declared.has(name))
        problems.push(`query parameter ${name} is not a parameter of ${op.operationId}`);
    }
    const requestBody = op.operation.requestBody ? this.deref(op.operation.requestBody) : null;
    if (!requestBody) {
      if (hasBody) problems.push(`${op.operationId} takes no request body`);
      return problems;
    }
    if (!hasBody) {
      if (requestBody.required) problems.push(`${op.operationId} requires a request body`);
      return problems;
    }
    const schema = requestBody.content?.['application/json']?.schema;
    const check = this.validator(`body:${op.operationId}`, schema);
    if (check && !check(body))
      problems.push(`request body: ${this.ajv.errorsText(check.errors, { dataVar: 'body' })}`);
    return problems;
  }

  /** Whether an answer the server gives matches the documented response for that status. */
  validateResponse(op: MatchedOperation, status: number, body: unknown): string[] {
    const response = op.operation.responses?.[String(status)];
    // GitHub answers 403 "Resource not accessible by integration" on operations that do not list a
    // 403 (checks/create among them); undocumented errors must still have GitHub's error shape.
    if (!response && status < 400) return [`${op.operationId} documents no ${status} response`];
    const schema = response
      ? this.deref(response).content?.['application/json']?.schema
      : { $ref: '#/components/schemas/basic-error' };
    if (!schema)
      return body === undefined || body === '' ? [] : [`${op.operationId} ${status} documents no JSON body`];
    const check = this.validator(`response:${op.operationId}:${status}`, schema);
    return check && !check(body)
      ? [`response ${status}: ${this.ajv.errorsText(check.errors, { dataVar: 'response' })}`]
      : [];
  }

  private deref(node: Json): Json {
    let n = node;
    while (n && typeof n.$ref === 'string') {
      n = n.$ref
        .replace(/^#\//, '')
        .split('/')
        .reduce((acc: Json, key: string) => acc?.[key], this.spec);
    }
    return n;
  }

  private validator(key: string, schema: Json | undefined): ValidateFunction | null {
    if (!schema) return null;
    if (!this.validators.has(key)) this.validators.set(key, this.ajv.compile(rebase(schema)));
    return this.validators.get(key)!;
  }
}

// Local refs point into the components document registered with ajv.
function rebase(node: unknown): any {
  if (Array.isArray(node)) return node.map(rebase);
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  // OpenAPI 3.0 reads `nullable` as also allowing null, even where an enum lists the other values.
  const n = node as Json;
  if (n.nullable === true && Array.isArray(n.enum) && !n.enum.includes(null)) out.enum = [...n.enum, null];
  for (const [k, v] of Object.entries(node)) {
    if (k === 'enum' && out.enum) continue;
    out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `${COMPONENTS_ID}${v}` : rebase(v);
  }
  return out;
}

function coerce(value: string, schema: Json | undefined): unknown {
  if (schema?.type === 'integer' || schema?.type === 'number')
    return /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
  if (schema?.type === 'boolean') return value === 'true' ? true : value === 'false' ? false : value;
  return value;
}
