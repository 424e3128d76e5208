// Renders a kustomization the way `kustomize build` does, for the subset deploy/kubernetes uses
// (there is no kustomize binary in CI): `resources` (YAML files, or directories holding a
// kustomization.yaml, rendered first) and `patches` given inline as JSON 6902 operations (add,
// replace, remove) on a target picked by kind and name. Any other field of a kustomization, or
// another kind of patch, is refused rather than ignored, so a manifest cannot quietly rely on
// something this renderer does not do.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, parse } from 'yaml';

export type K8sObject = Record<string, any> & { apiVersion: string; kind: string; metadata: { name: string } };

const KNOWN_FIELDS = new Set(['apiVersion', 'kind', 'resources', 'patches']);

interface Operation {
  op: 'add' | 'replace' | 'remove';
  path: string;
  value?: unknown;
}

function pointer(path: string): string[] {
  if (!path.startsWith('/')) throw new Error(`a JSON patch path starts with /, got ${path}`);
  return path.slice(1).split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** RFC 6902 add, replace and remove, on a deep copy. */
export function applyJsonPatch(target: K8sObject, operations: readonly Operation[]): K8sObject {
  const doc = structuredClone(target);
  for (const operation of operations) {
    const parts = pointer(operation.path);
    const last = parts.pop()!;
    let parent: any = doc;
    for (const part of parts) {
      parent = Array.isArray(parent) ? parent[Number(part)] : parent?.[part];
      if (parent === undefined || parent === null || typeof parent !== 'object') throw new Error(`no ${operation.path} in ${target.kind}/${target.metadata.name}`);
    }
    if (operation.op !== 'add' && operation.op !== 'replace' && operation.op !== 'remove') throw new Error(`patch operation ${String(operation.op)} is not supported`);
    if (Array.isArray(parent)) {
      const index = last === '-' ? parent.length : Number(last);
      if (!Number.isInteger(index) || index < 0 || index > parent.length) throw new Error(`bad index in ${operation.path}`);
      if (operation.op === 'add') parent.splice(index, 0, structuredClone(operation.value));
      else if (index >= parent.length) throw new Error(`no ${operation.path} in ${target.kind}/${target.metadata.name}`);
      else if (operation.op === 'replace') parent[index] = structuredClone(operation.value);
      else parent.splice(index, 1);
    } else {
      if (operation.op !== 'add' && !(last in parent)) throw new Error(`no ${operation.path} in ${target.kind}/${target.metadata.name}`);
      if (operation.op === 'remove') delete parent[last];
      else parent[last] = structuredClone(operation.value);
    }
  }
  return doc;
}

function readObjects(file: string): K8sObject[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
      return doc.toJS() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null);
}

/** The objects `kustomize build <dir>` would print, in order. */
export function renderKustomization(dir: string): K8sObject[] {
  const kustomization = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Record<string, any>;
  for (const field of Object.keys(kustomization)) {
    if (!KNOWN_FIELDS.has(field)) throw new Error(`${dir}/kustomization.yaml: "${field}" is not supported by the test's renderer (test/support/kustomize.ts)`);
  }
  if (kustomization['kind'] !== 'Kustomization' || kustomization['apiVersion'] !== 'kustomize.config.k8s.io/v1beta1') {
    throw new Error(`${dir}/kustomization.yaml is not a kustomize.config.k8s.io/v1beta1 Kustomization`);
  }
  let objects: K8sObject[] = [];
  for (const resource of (kustomization['resources'] ?? []) as string[]) {
    const path = join(dir, resource);
    objects.push(...(statSync(path).isDirectory() ? renderKustomization(path) : readObjects(path)));
  }
  const ids = objects.map((o) => `${o.kind}/${o.metadata.name}`);
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice) throw new Error(`${dir}: ${twice} is defined twice`);
  for (const entry of (kustomization['patches'] ?? []) as Record<string, any>[]) {
    const { kind, name, ...rest } = (entry['target'] ?? {}) as Record<string, string>;
    if (!kind || !name || Object.keys(rest).length > 0 || Object.keys(entry).some((k) => k !== 'target' && k !== 'patch')) {
      throw new Error(`${dir}: a patch needs an inline "patch" and a target of kind and name only (test/support/kustomize.ts)`);
    }
    const operations = parse(String(entry['patch'])) as Operation[];
    if (!Array.isArray(operations)) throw new Error(`${dir}: only JSON 6902 patches are supported (test/support/kustomize.ts)`);
    const index = objects.findIndex((o) => o.kind === kind && o.metadata.name === name);
    if (index < 0) throw new Error(`${dir}: a patch targets ${kind}/${name}, which no resource defines`);
    objects = objects.map((o, i) => (i === index ? applyJsonPatch(o, operations) : o));
  }
  return objects;
}
