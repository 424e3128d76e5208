// Validates a Kubernetes object against the API's own schemas (the npm package kubernetes-models,
// generated from the Kubernetes OpenAPI document), strictly:
// - the models' validators accept fields they do not declare (their schemas leave
//   additionalProperties open), which the API server would drop or, with kubectl's strict field
//   validation, refuse. So the object is validated through a Proxy that notes every field the
//   validator reads: a field it never read (and whose object it never listed, as it does maps
//   such as labels or a ConfigMap's data) is not declared by the schema, and is refused.
// - an apiVersion in alpha or beta is refused: the ones this kind of manifest used to name
//   (extensions/v1beta1, policy/v1beta1, autoscaling/v2beta2, ...) are removed from the API, and
//   the models still carry them.
// - a kind the apiVersion does not have is refused.

export interface Problem {
  readonly object: string;
  readonly message: string;
}

type Validated = { validate(): void };
type ModelClass = new (data: unknown) => Validated;

const groups = new Map<string, Record<string, unknown>>();

async function modelFor(apiVersion: string, kind: string): Promise<ModelClass | undefined> {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const module = `kubernetes-models/${group ? `${group}/` : ''}${version}`;
  if (!groups.has(module)) {
    try {
      groups.set(module, (await import(module)) as Record<string, unknown>);
    } catch {
      groups.set(module, {});
    }
  }
  const model = groups.get(module)![kind];
  return typeof model === 'function' ? (model as ModelClass) : undefined;
}

interface Seen {
  readonly path: string;
  readonly read: Set<string>;
  listed: boolean;
}

/** A read-tracking view of `value`, and the record of what was read, per object. */
function track(value: unknown, path: string, seen: Map<object, Seen>): unknown {
  if (value === null || typeof value !== 'object') return value;
  const target = value as Record<string, unknown>;
  if (!Array.isArray(target) && !seen.has(target)) seen.set(target, { path, read: new Set(), listed: false });
  return new Proxy(target, {
    get(t, prop, receiver) {
      const child = Reflect.get(t, prop, receiver) as unknown;
      if (typeof prop !== 'string') return child;
      if (!Array.isArray(t)) seen.get(t)!.read.add(prop);
      return track(child, `${path}/${prop}`, seen);
    },
    ownKeys(t) {
      if (!Array.isArray(t)) seen.get(t)!.listed = true;
      return Reflect.ownKeys(t);
    },
  });
}

export async function validateStrictly(object: Record<string, any>): Promise<Problem[]> {
  const id = `${String(object['kind'])}/${String(object['metadata']?.['name'])} (${String(object['apiVersion'])})`;
  const apiVersion = String(object['apiVersion']);
  if (/\/?v\d+(alpha|beta)\d+$/.test(apiVersion)) {
    return [{ object: id, message: `apiVersion ${apiVersion} is not a stable version (the alpha and beta ones these kinds had are removed)` }];
  }
  const Model = await modelFor(apiVersion, String(object['kind']));
  if (!Model) return [{ object: id, message: `the Kubernetes API has no kind ${String(object['kind'])} in ${apiVersion}` }];
  const copy = structuredClone(object);
  const problems: Problem[] = [];
  const seen = new Map<object, Seen>();
  // The model's own validate, run on the tracking view of the object (as the model would hold it).
  const model = new Model(copy);
  try {
    model.validate.call(track(copy, '', seen) as Validated);
  } catch (err) {
    problems.push({ object: id, message: (err as Error).message });
  }
  for (const [target, record] of seen) {
    if (record.listed) continue;
    for (const key of Object.keys(target)) {
      if (!record.read.has(key)) problems.push({ object: id, message: `${record.path}/${key} is not a field of the API` });
    }
  }
  return problems;
}
