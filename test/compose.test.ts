// compose.yaml and the Dockerfile, checked without a Docker engine (none runs here): `docker compose
// config` where that command exists (skipped otherwise, and the test's name says so); the compose
// file's shape (services, published images, health checks, the variables every process must share,
// which the service's own configuration accepts); the image's and compose's commands are the README's.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';

const root = path.resolve(import.meta.dirname, '..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

interface Service {
  image?: string;
  init?: boolean;
  build?: string | { context: string; dockerfile?: string };
  command?: string[] | string;
  entrypoint?: string[] | string;
  environment?: Record<string, string>;
  volumes?: unknown[];
  healthcheck?: { test?: string[] | string; disable?: boolean };
  depends_on?: Record<string, { condition: string }>;
  ports?: string[];
}
const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, Service>; configs?: Record<string, { content?: string }> };
const services = compose.services;
const PROCESSES = ['api-1', 'api-2', 'worker'];

/** The scaled-shape section of the README, up to the next "## " heading. */
function scaledSection(): string {
  const readme = read('README.md');
  const start = readme.indexOf('## The scaled shape\n');
  expect(start).toBeGreaterThanOrEqual(0);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end === -1 ? undefined : end);
}

/** Lines of the fenced `sh` blocks of a piece of markdown. */
function shLines(markdown: string): string[] {
  return [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((match) => match[1].split('\n')).map((line) => line.replace(/#.*$/, '').trim());
}

const backticked = (text: string) => [...text.matchAll(/`([A-Z][A-Z0-9_]*\*?)`/g)].map((match) => match[1]);

/** What docker compose makes of `${NAME}`, `${NAME:-default}`, `${NAME:?message}` and `$$`, given these variables. */
function interpolate(value: string, given: Record<string, string>): string {
  return value
    .replace(/\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}/g, (_, name: string, kind: string | undefined, rest: string) => {
      if (given[name] !== undefined && given[name] !== '') return given[name];
      if (kind === '?') throw new Error(`compose would stop: ${name} is required (${rest})`);
      return kind === '-' ? rest : '';
    })
    .replace(/\$\$/g, '$');
}

const operatorEnv = {
  JWT_SECRET: 'j'.repeat(48),
  ENCRYPTION_KEY: 'ab'.repeat(32),
  POSTGRES_PASSWORD: 'postgres-secret',
  MINIO_ROOT_PASSWORD: 'minio-secret',
};

const dockerCompose = spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0;

describe('compose.yaml', () => {
  const title = dockerCompose
    ? 'is accepted by `docker compose config`'
    : 'is accepted by `docker compose config` (skipped: `docker compose` is not installed on this machine)';
  it.skipIf(!dockerCompose)(title, () => {
    const result = spawnSync('docker', ['compose', '-f', 'compose.yaml', 'config', '--quiet'], {
      cwd: root,
      env: { ...process.env, ...operatorEnv },
      encoding: 'utf8',
    });
    expect(result.status, result.stderr).toBe(0);
  });

  it('has the scaled shape: two API processes, a worker, PostgreSQL with pgvector, Redis, an S3 store and its bucket, a proxy and a mail catcher', () => {
    expect(Object.keys(services).sort()).toEqual(['api-1', 'api-2', 'mailpit', 'minio', 'minio-setup', 'postgres', 'proxy', 'redis', 'worker']);
    expect(services.postgres.image).toMatch(/^pgvector\/pgvector:pg1[6-9]$/);
    expect(services.redis.image).toMatch(/^redis:\d/);
    expect(services.minio.image).toMatch(/minio\/minio:RELEASE\./);
    expect(services['minio-setup'].image).toMatch(/minio\/mc:RELEASE\./);
  });

  it('builds the service from its own Dockerfile, once for its three processes, and uses published, tagged images for the rest', () => {
    for (const name of PROCESSES) {
      const build = services[name].build;
      expect(typeof build === 'string' ? build : build?.context, name).toBe('.');
      expect(services[name].image, name).toBe(services['api-1'].image);
    }
    for (const [name, service] of Object.entries(services).filter(([name]) => !PROCESSES.includes(name))) {
      expect(service.build, name).toBeUndefined();
      expect(service.image, name).toMatch(/^[a-z0-9./-]+:[A-Za-z0-9._-]+$/); // a tag, so the stack does not change under its operator
      expect(service.image, name).not.toMatch(/:latest$/);
    }
  });

  it('runs the README commands: npm run start:api on the API processes, npm run start:worker on the worker', () => {
    const command = (name: string) => [services[name].command].flat().join(' ');
    expect(command('api-1')).toBe('npm run start:api');
    expect(command('api-2')).toBe('npm run start:api');
    expect(command('worker')).toBe('npm run start:worker');
  });

  it('checks health: the databases and the store have checks, the API processes keep the image check on /api/test, and what depends on them waits', () => {
    for (const name of ['postgres', 'redis', 'minio']) expect(services[name].healthcheck?.test, name).toBeDefined();
    for (const name of ['api-1', 'api-2']) expect(services[name].healthcheck, name).toBeUndefined();
    expect(read('Dockerfile')).toMatch(/^HEALTHCHECK [^\n]*\\\n\s+CMD [^\n]*\/api\/test/m);
    // A worker serves no HTTP.
    expect(services.worker.healthcheck).toEqual({ disable: true });
    for (const name of PROCESSES) {
      expect(services[name].depends_on, name).toMatchObject({
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
        'minio-setup': { condition: 'service_completed_successfully' },
      });
    }
    expect(services.proxy.depends_on).toEqual({ 'api-1': { condition: 'service_healthy' }, 'api-2': { condition: 'service_healthy' } });
    expect(services['minio-setup'].depends_on).toEqual({ minio: { condition: 'service_healthy' } });
  });

  it('gives every service process the variables the README says must be equal, equal, and no volume of its own', () => {
    const section = scaledSection();
    const paragraph = section.slice(section.indexOf('**Equal on every process**'), section.indexOf('Simplest: give every'));
    expect(paragraph.length).toBeGreaterThan(100);
    const required = backticked(paragraph.slice(0, paragraph.indexOf('and where set')));
    expect(required).toEqual(expect.arrayContaining(['DATABASE_URL', 'REDIS_URL', 'JWT_SECRET', 'ENCRYPTION_KEY', 'FILES_S3_BUCKET', 'PUBLIC_URL']));
    const all = backticked(paragraph).filter((name) => !name.endsWith('*'));
    for (const name of PROCESSES) {
      const env = services[name].environment ?? {};
      for (const variable of required) expect(env[variable], `${name} ${variable}`).toBeDefined();
      for (const variable of all) expect(env[variable], `${name} ${variable}`).toEqual(services['api-1'].environment?.[variable]);
      expect(env.DATA_DIR, name).toBeUndefined();
      expect(services[name].volumes, name).toBeUndefined();
    }
  });

  it("wires the shared variables to the stack's own services, in a configuration the service accepts", () => {
    const env = Object.fromEntries(Object.entries(services.worker.environment!).map(([name, value]) => [name, interpolate(String(value), operatorEnv)]));
    const config = loadConfig({ ...env, DATA_DIR: '/data' });
    expect(new URL(config.databaseUrl!).host).toBe('postgres:5432');
    expect(new URL(config.redisUrl!).host).toBe('redis:6379');
    expect(config.filesS3).toEqual({ bucket: expect.any(String), endpoint: 'http://minio:9000', region: 'us-east-1', forcePathStyle: true });
    expect(config.mail.smtpUrl).toBe('smtp://mailpit:1025');
    expect(config.jwtSecret).toBe(operatorEnv.JWT_SECRET);
    expect(config.admin).toBeUndefined(); // set by the operator's .env, or nothing

    // The bucket the processes use is the one the one-shot makes, with the store's own credentials.
    const setup = [services['minio-setup'].command].flat().join(' ');
    expect(setup).toContain(`mb --ignore-existing store/${config.filesS3!.bucket}`);
    const minio = services.minio.environment!;
    expect(env.AWS_ACCESS_KEY_ID).toBe(minio.MINIO_ROOT_USER);
    expect(env.AWS_SECRET_ACCESS_KEY).toBe(interpolate(minio.MINIO_ROOT_PASSWORD, operatorEnv));
    const postgres = services.postgres.environment!;
    const database = new URL(config.databaseUrl!);
    expect([database.username, decodeURIComponent(database.password), database.pathname.slice(1)]).toEqual([
      postgres.POSTGRES_USER,
      interpolate(postgres.POSTGRES_PASSWORD, operatorEnv),
      postgres.POSTGRES_DB,
    ]);

    // The secrets must be given: without them compose stops before starting anything.
    expect(() => interpolate(services.worker.environment!.JWT_SECRET, {})).toThrow(/JWT_SECRET is required/);
    expect(() => interpolate(services.worker.environment!.ENCRYPTION_KEY, {})).toThrow(/ENCRYPTION_KEY is required/);
  });

  it('sends the load to both API processes through the proxy, which alone is published', () => {
    const proxyConf = compose.configs?.['proxy-conf']?.content ?? '';
    expect(proxyConf).toMatch(/server api-1:3000;/);
    expect(proxyConf).toMatch(/server api-2:3000;/);
    expect(proxyConf).toMatch(/proxy_buffering off;/); // answers stream
    expect(proxyConf).toMatch(/proxy_set_header Upgrade \$\$http_upgrade;/); // Socket.IO's websocket, $ escaped for compose
    for (const name of PROCESSES) expect(services[name].ports, name).toBeUndefined();
    expect(services.proxy.ports).toHaveLength(1);
    for (const name of ['api-1', 'api-2']) expect(services[name].environment?.TRUST_PROXY, name).toBe('true');
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const instructions = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const stages = instructions.filter((line) => line.startsWith('FROM '));
  const finalStage = instructions.slice(instructions.lastIndexOf(stages[stages.length - 1]));

  it('is multi-stage from a published Node 20 image, installs with npm ci, and runs as a non-root user', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage).toMatch(/^FROM node:20[\w.-]* AS \w+$/);
    const runs = instructions.filter((line) => line.startsWith('RUN '));
    expect(runs.filter((line) => /\bnpm ci\b/.test(line)).length).toBeGreaterThanOrEqual(2);
    expect(runs.some((line) => /\bnpm install\b/.test(line))).toBe(false);
    const user = finalStage.filter((line) => line.startsWith('USER ')).at(-1);
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^USER (root|0)(:|$)/);
    // The user is set before the command runs: nothing after it switches back.
    expect(finalStage.indexOf(user!)).toBeLessThan(finalStage.findIndex((line) => line.startsWith('CMD ')));
  });

  it("runs the README's commands: npm start by default, npm run start:api / start:worker in the scaled shape", () => {
    const cmd = finalStage.find((line) => line.startsWith('CMD '))!;
    const command = (JSON.parse(cmd.slice(4)) as string[]).join(' ');
    expect(command).toBe('npm start');

    const readmeCommands = shLines(read('README.md'));
    const scaledCommands = shLines(scaledSection());
    expect(readmeCommands.some((line) => line.split('&&').map((part) => part.trim()).includes('npm start'))).toBe(true);
    expect(scaledCommands).toContain('npm run start:api');
    expect(scaledCommands).toContain('npm run start:worker');
    expect(scaledSection()).toMatch(/Its\s+command\s+is\s+`npm start`/);

    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    for (const script of ['start', 'start:api', 'start:worker']) expect(scripts[script], script).toBeDefined();
  });

  it("makes the embedded database's empty cluster as root, before the service's user, who cannot write node_modules", () => {
    const made = finalStage.findIndex((line) => line.startsWith('RUN ') && line.includes('node scripts/build-server.mjs'));
    expect(made).toBeGreaterThan(finalStage.findIndex((line) => line.startsWith('COPY --from=build /app/dist')));
    expect(made).toBeLessThan(finalStage.findIndex((line) => line.startsWith('USER ')));
  });

  it("lets a stop's SIGTERM reach the service through npm: scripts run by bash, which execs node", () => {
    const env = finalStage.filter((line) => line.startsWith('ENV ')).join(' ');
    expect(env).toMatch(/\bnpm_config_script_shell=\/bin\/bash\b/);
    expect(services['api-1'].init).toBe(true); // PID 1 passes signals on and reaps
  });

  it('leaves local data, installed modules and secrets out of the build context', () => {
    const ignored = read('.dockerignore').split('\n').map((line) => line.trim());
    for (const entry of ['node_modules', 'web/node_modules', 'data', '.env', '.git']) expect(ignored, entry).toContain(entry);
  });
});
