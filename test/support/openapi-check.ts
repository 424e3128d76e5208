// Checks recorded responses against the OpenAPI document: the path and method are declared
// (answers to undeclared ones must be 401/403/404/405 errors), the status is declared for the
// operation, the body matches its schema, and the declared headers are present when required
// and match their schemas.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { buildOpenApiDocument } from '../../src/openapi/document.js';
import type { RecordedResponse } from './response-recorder.js';

type Json = Record<string, any>;

const DOC_ID = 'urn:pds:openapi';
/** Separates a problem from the body that showed it, so one problem is reported once. */
const BODY_MARK = '\n      first body: ';

/** A JSON pointer segment: `/` -> `~1`, `~` -> `~0`. */
const pointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

export class ResponseChecker {
  private readonly ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly matchers: { template: string; regex: RegExp; literal: boolean }[];
  private readonly errorEnvelope: ValidateFunction;

  constructor(private readonly doc: Json = buildOpenApiDocument()) {
    this.ajv.addSchema({ ...doc, $id: DOC_ID });
    this.errorEnvelope = this.ajv.compile({ $ref: `${DOC_ID}#/components/schemas/Error` });
    this.matchers = Object.keys(doc['paths']).map((template) => ({
      template,
      literal: !template.includes('{'),
      regex: new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{\w+\}/g, '[^/]+')}$`),
    }));
    // Literal paths first, so /workspaces/keys would never be taken for /workspaces/{id}.
    this.matchers.sort((a, b) => Number(b.literal) - Number(a.literal));
  }

  private schemaAt(template: string, method: string, status: string, type: string): ValidateFunction {
    const ref = `${DOC_ID}#/paths/${pointer(template)}/${method}/responses/${status}/content/${pointer(type)}/schema`;
    let validate = this.validators.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref });
      this.validators.set(ref, validate);
    }
    return validate;
  }

  private headerValidator(schema: Json): ValidateFunction {
    const id = JSON.stringify(schema);
    let validate = this.validators.get(id);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.validators.set(id, validate);
    }
    return validate;
  }

  /** The problem with one response, or undefined when the document describes it. */
  check(r: RecordedResponse): string | undefined {
    const method = r.method.toLowerCase();
    if (method === 'head' || method === 'options') return undefined;
    // The public router is not strict: `/players/` is served as `/players`, so it is matched so.
    const path = r.path.startsWith('/api/v1/') && r.path.endsWith('/') ? r.path.slice(0, -1) : r.path;
    const match = this.matchers.find((m) => m.regex.test(path));
    const operation: Json | undefined = match ? this.doc['paths'][match.template][method] : undefined;
    // ADMIN_API_OFF: without ADMIN_TOKEN the admin routes do not exist (components.responses.UnknownRoute).
    const switchedOff = r.status === 404 && (r.body as Json | undefined)?.['code'] === 'ADMIN_API_OFF';
    if (!match || !operation || switchedOff) {
      // Undeclared paths and methods: the router answers them with the error envelope.
      // (404 and 405 are components.responses UnknownRoute and MethodNotAllowed.)
      if (![401, 403, 404, 405].includes(r.status)) return `undeclared ${r.method} ${r.path} answered ${r.status}`;
      if (r.status === 405) {
        const required = Object.entries<Json>(this.doc['components']['responses']['MethodNotAllowed']['headers']);
        const missing = required.find(([name, h]) => h['required'] && r.headers[name.toLowerCase()] === undefined);
        if (missing) return `undeclared ${r.method} ${r.path} answered 405 without ${missing[0]}`;
      }
      return this.errorEnvelope(r.body) ? undefined : `undeclared ${r.method} ${r.path}: body is not the error envelope`;
    }
    const where = `${r.method} ${match.template} ${r.status}`;
    const declared: Json | undefined = operation['responses'][String(r.status)];
    if (!declared) return `${where}: status not in the document`;
    const type = Object.keys(declared['content'])[0]!;
    if (!r.contentType.startsWith(type)) return `${where}: content type ${r.contentType}, document says ${type}`;
    const validate = this.schemaAt(match.template, method, String(r.status), type);
    if (!validate(r.body)) {
      return `${where}: body does not match: ${this.ajv.errorsText(validate.errors)}${BODY_MARK}${JSON.stringify(r.body).slice(0, 300)}`;
    }
    for (const [name, header] of Object.entries<Json>(declared['headers'] ?? {})) {
      const value = r.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header['required']) return `${where}: header ${name} missing`;
        continue;
      }
      const validateHeader = this.headerValidator(header['schema']);
      if (!validateHeader(value)) return `${where}: header ${name} "${value}" does not match its schema`;
    }
    return undefined;
  }

  /** Every distinct problem, each with the first test that showed it. */
  checkAll(responses: readonly RecordedResponse[]): string[] {
    const problems = new Map<string, string>();
    for (const r of responses) {
      const problem = this.check(r);
      if (!problem) continue;
      const [what] = problem.split(BODY_MARK);
      if (!problems.has(what!)) problems.set(what!, `${problem}\n      in test: ${r.test ?? '?'}`);
    }
    return [...problems.values()];
  }
}
