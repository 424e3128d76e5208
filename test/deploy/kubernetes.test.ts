// deploy/kubernetes: the base and both overlays, rendered as `kustomize build` would
// (test/support/kustomize.ts), every object validated strictly against the Kubernetes API's
// schemas (test/support/k8s-schema.ts), and the settings and timings checked against the
// service's own (src/config.ts).
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { validateStrictly } from '../support/k8s-schema.js';
import { renderKustomization, type K8sObject } from '../support/kustomize.js';

const ROOT = 'deploy/kubernetes';
const BUILDS = ['base', 'overlays/single-redis', 'overlays/redis-cluster'] as const;

function find(objects: K8sObject[], kind: string, name: string): K8sObject {
  const object = objects.find((o) => o.kind === kind && o.metadata.name === name);
  expect(object, `${kind}/${name}`).to.not.equal(undefined);
  return object!;
}

/** The settings src/config.ts reads (each `env, 'NAME'` it passes to a parser, and env['NAME']). */
function settingNames(): Set<string> {
  const source = readFileSync('src/config.ts', 'utf8');
  return new Set([...source.matchAll(/env(?:, |\[)'([A-Z0-9_]+)'/g)].map((m) => m[1]!));
}

/** The env a pod of the Deployment gets: its ConfigMap's data, then its own env (secrets as placeholders). */
function podEnv(objects: K8sObject[]): Record<string, string> {
  const deployment = find(objects, 'Deployment', 'pds');
  const container = deployment['spec']['template']['spec']['containers'][0];
  const env: Record<string, string> = {};
  for (const from of container['envFrom'] ?? []) Object.assign(env, find(objects, 'ConfigMap', from['configMapRef']['name'])['data']);
  for (const entry of container['env'] ?? []) {
    const value = entry['valueFrom'] ? 'a'.repeat(32) + entry['name'].toLowerCase() : String(entry['value']);
    env[entry['name']] = value.replace(/\$\(([A-Z0-9_]+)\)/g, (_, name: string) => env[name] ?? `$(${name})`);
  }
  return env;
}

describe('deploy/kubernetes', () => {
  for (const build of BUILDS) {
    it(`${build}: every rendered object is valid for the Kubernetes API, with no field it does not declare`, async () => {
      const objects = renderKustomization(`${ROOT}/${build}`);
      expect(objects.length).to.be.greaterThan(5);
      const problems = (await Promise.all(objects.map((o) => validateStrictly(o)))).flat();
      expect(problems).to.deep.equal([]);
    });
  }

  it('refuses a field the API does not declare, a wrong type, a removed apiVersion and a kind the version lacks', async () => {
    const objects = renderKustomization(`${ROOT}/base`);
    const deployment = find(objects, 'Deployment', 'pds');

    const unknownField = structuredClone(deployment);
    unknownField['spec']['template']['spec']['containers'][0]['readinessProbes'] = unknownField['spec']['template']['spec']['containers'][0]['readinessProbe'];
    expect((await validateStrictly(unknownField)).map((p) => p.message)).to.deep.equal([
      '/spec/template/spec/containers/0/readinessProbes is not a field of the API',
    ]);
    const unknownTopLevel = { ...structuredClone(deployment), extra: true };
    expect((await validateStrictly(unknownTopLevel)).map((p) => p.message)).to.deep.equal(['/extra is not a field of the API']);

    const wrongType = structuredClone(deployment);
    wrongType['spec']['template']['spec']['terminationGracePeriodSeconds'] = '25';
    expect((await validateStrictly(wrongType))[0]?.message).to.match(/terminationGracePeriodSeconds.*integer/);

    const removed = { ...structuredClone(deployment), apiVersion: 'extensions/v1beta1' };
    expect((await validateStrictly(removed))[0]?.message).to.match(/extensions\/v1beta1 is not a stable version/);
    const pdb = { ...structuredClone(find(objects, 'PodDisruptionBudget', 'pds')), apiVersion: 'policy/v1beta1' };
    expect(await validateStrictly(pdb)).to.have.length(1);
    const noSuchVersion = { ...structuredClone(deployment), apiVersion: 'apps/v2' };
    expect((await validateStrictly(noSuchVersion))[0]?.message).to.match(/no kind Deployment in apps\/v2/);
  });

  it('refuses a field added to any object of the rendered manifests, except the maps that take any key', async () => {
    const objects = renderKustomization(`${ROOT}/overlays/single-redis`);
    const notRefused: string[] = [];
    let tried = 0;
    for (const object of objects) {
      const paths: (string | number)[][] = [];
      const walk = (value: unknown, path: (string | number)[]) => {
        if (!value || typeof value !== 'object') return;
        if (!Array.isArray(value)) paths.push(path);
        for (const [key, child] of Object.entries(value)) walk(child, [...path, Array.isArray(value) ? Number(key) : key]);
      };
      walk(object, []);
      for (const path of paths) {
        const copy = structuredClone(object);
        const target = path.reduce<any>((node, key) => node[key], copy);
        target['notAField'] = 1;
        tried++;
        if (!(await validateStrictly(copy)).some((p) => p.message.includes('notAField'))) notRefused.push(`${object.kind} /${path.join('/')}`);
      }
    }
    expect(tried).to.be.greaterThan(100);
    // Resource lists map any resource name to a quantity: a new key there is a resource, not a field.
    expect(notRefused.filter((path) => !/\/resources\/(requests|limits)$/.test(path))).to.deep.equal([]);
  });

  it('sets only settings the service reads, and a configuration it starts with, in both overlays', () => {
    const known = settingNames();
    expect(known.has('SHUTDOWN_DRAIN_MS') && known.has('REDIS_CLUSTER_NODES')).to.equal(true);
    for (const build of ['overlays/single-redis', 'overlays/redis-cluster']) {
      const env = podEnv(renderKustomization(`${ROOT}/${build}`));
      // REDIS_PASSWORD only feeds REDIS_URL's $(REDIS_PASSWORD): Kubernetes expands it there.
      const unknown = Object.keys(env).filter((name) => !known.has(name) && name !== 'REDIS_PASSWORD');
      expect(unknown, `${build}: names src/config.ts does not read`).to.deep.equal([]);
      const config = loadConfig(env);
      expect(config.admin.port).to.equal(8081);
      expect(config.shutdownDrainMs).to.be.greaterThan(0);
      if (build.endsWith('single-redis')) {
        expect(config.redisUrl).to.match(/^redis:\/\/:a{32}redis_password@pds-redis:6379$/);
        expect(config.redisClusterNodes).to.equal(undefined);
      } else {
        expect(config.redisClusterNodes).to.have.length(3);
      }
    }
  });

  it('probes the ops port, drains within the grace period, and runs unprivileged on a read-only root', () => {
    const objects = renderKustomization(`${ROOT}/overlays/single-redis`);
    const config = loadConfig(podEnv(objects));
    const pod = find(objects, 'Deployment', 'pds')['spec']['template']['spec'];
    const container = pod['containers'][0];
    const opsPort = container['ports'].find((p: { name: string }) => p.name === 'ops')['containerPort'];
    expect(opsPort).to.equal(config.admin.port);
    expect(container['ports'].find((p: { name: string }) => p.name === 'http')['containerPort']).to.equal(config.port);
    for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) expect(container[probe]['httpGet']['port'], probe).to.equal('ops');
    expect(container['readinessProbe']['httpGet']['path']).to.equal('/readyz');
    expect(container['livenessProbe']['httpGet']['path']).to.equal('/healthz');

    // The drain outlasts the readiness probe's verdict; preStop, drain and grace fit before SIGKILL.
    const readiness = container['readinessProbe'];
    expect(config.shutdownDrainMs).to.be.at.least(readiness['periodSeconds'] * readiness['failureThreshold'] * 1000);
    const preStopMs = container['lifecycle']['preStop']['sleep']['seconds'] * 1000;
    expect(pod['terminationGracePeriodSeconds'] * 1000).to.be.above(preStopMs + config.shutdownDrainMs + config.shutdownGraceMs + 2000);

    expect(pod['securityContext']['runAsNonRoot']).to.equal(true);
    expect(pod['securityContext']['runAsUser']).to.equal(Number(/^USER (\d+):/m.exec(readFileSync('Dockerfile', 'utf8'))![1]));
    expect(container['securityContext']).to.deep.include({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    expect(container['securityContext']['capabilities']).to.deep.equal({ drop: ['ALL'] });
    expect(container['resources']['requests']).to.have.keys('cpu', 'memory');
    expect(container['resources']['limits']).to.have.keys('cpu', 'memory');
    // The one place the service writes (an import's spool in os.tmpdir()) is an emptyDir.
    const tmp = container['volumeMounts'].find((m: { mountPath: string }) => m.mountPath === '/tmp');
    expect(pod['volumes'].find((v: { name: string }) => v.name === tmp?.name)?.['emptyDir']).to.not.equal(undefined);
    expect(pod['topologySpreadConstraints'].map((c: { topologyKey: string }) => c.topologyKey)).to.include('kubernetes.io/hostname');

    const secrets = container['env'].filter((e: any) => e.valueFrom?.secretKeyRef).map((e: { name: string }) => e.name);
    expect(secrets).to.have.members(['ADMIN_TOKEN', 'ROBLOX_WEBHOOK_SECRET', 'ERASURE_DIGEST_SECRET', 'REDIS_PASSWORD']);
  });

  it('keeps the ops port inside the namespace, and the single Redis persistent, bounded and private', () => {
    const objects = renderKustomization(`${ROOT}/overlays/single-redis`);
    const policy = find(objects, 'NetworkPolicy', 'pds')['spec'];
    const opsRules = policy['ingress'].filter((r: any) => r.ports.some((p: { port: string }) => p.port === 'ops'));
    expect(opsRules).to.have.length(1);
    // A podSelector alone (no namespaceSelector, no ipBlock) admits this namespace's pods only.
    expect(opsRules[0]['from']).to.deep.equal([{ podSelector: {} }]);
    expect(policy['ingress'].filter((r: any) => r.from === undefined).flatMap((r: any) => r.ports.map((p: { port: string }) => p.port))).to.deep.equal(['http']);

    const redis = find(objects, 'StatefulSet', 'pds-redis')['spec'];
    const args: string[] = redis['template']['spec']['containers'][0]['args'];
    const arg = (name: string) => args[args.indexOf(name) + 1];
    expect(arg('--appendonly')).to.equal('yes');
    expect(arg('--maxmemory-policy')).to.equal('noeviction');
    expect(arg('--maxmemory')).to.match(/^\d+mb$/);
    expect(arg('--requirepass')).to.equal('$(REDIS_PASSWORD)');
    expect(redis['volumeClaimTemplates'][0]['metadata']['name']).to.equal(redis['template']['spec']['containers'][0]['volumeMounts'][0]['name']);
    expect(find(objects, 'NetworkPolicy', 'pds-redis')['spec']['ingress'][0]['from'][0]['podSelector']['matchLabels']['app.kubernetes.io/component']).to.equal('api');
  });
});
