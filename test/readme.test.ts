import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PROJECT_ROOT } from '#lib/paths.js';
import { CHROMIUM_PATH, launchBrowser, runInGraphiQL } from '#test/support/browser.js';
import { freePorts } from '#test/support/ports.js';

/** A fenced code block of the README, with the heading it sits under. */
interface Block {
  heading: string;
  lang: string;
  text: string;
}

function blocksOf(markdown: string): Block[] {
  const blocks: Block[] = [];
  let heading = '';
  let open: Block | undefined;
  for (const line of markdown.split('\n')) {
    if (open) {
      if (line.startsWith('```')) {
        blocks.push(open);
        open = undefined;
      } else open.text += `${line}\n`;
    } else if (line.startsWith('```')) open = { heading, lang: line.slice(3).trim(), text: '' };
    else if (/^#{2,3} /.test(line)) heading = line.replace(/^#+ /, '');
  }
  return blocks;
}

/** The commands of a shell block: continued lines joined, trailing `# comments` dropped. */
function commandsOf(block: Block): string[] {
  return block.text
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.replace(/\s{2,}#\s.*$/, '').trim())
    .filter((line) => line && !line.startsWith('#'));
}

/** Commands the README shows that cannot run on the machines this project is built and tested on, and why. */
const NOT_RUN_HERE: Array<[RegExp, string]> = [
  [
    /^npm install( && npm start)?$/,
    'installs into this checkout, which the test suite itself runs from; npm start is run below',
  ],
  [/^npm test$/, 'the command that runs this very test'],
  [/^npm audit /, "npm's advisory service cannot be reached from these machines (the README says so)"],
  [/^docker /, 'Docker cannot run on these machines (test/docker-compose.test.ts checks the compose file)'],
  [/^kubectl /, 'no Kubernetes cluster here (test/deploy/kubernetes.test.ts renders and validates the manifests)'],
  [/^cp \S+\.example \S+/, 'copies a template of secrets for the user to fill in'],
  [/^npx hive-gateway supergraph /, 'test/gateway/hive-gateway.test.ts runs Hive Gateway on the checked-in supergraph'],
];

/** The README and the pages of docs/ it links to, whose commands are run (or accounted for) alike. */
const DOCS = ['README.md', ...readdirSync(path.join(PROJECT_ROOT, 'docs')).map((name) => path.join('docs', name))];
const readme = DOCS.map((file) => readFileSync(path.join(PROJECT_ROOT, file), 'utf8')).join('\n');
const blocks = blocksOf(readme);
const shellBlocks = blocks.filter((block) => block.lang === 'sh');
const walkThrough = blocks.filter((block) => block.heading === 'First ten minutes');
const tokenBlock = shellBlocks.find((block) => block.heading === 'Getting a token');
const metricsBlock = shellBlocks.find((block) => block.heading === 'Metrics, traces and logs');
const headersBlock = shellBlocks.find((block) => block.heading === 'REST headers');
const importBlock = shellBlocks.find((block) => block.heading === 'Bulk import and export (contacts)');
/** Blocks this test runs command by command. */
const RUN = new Set([...walkThrough, tokenBlock, metricsBlock, headersBlock, importBlock]);

const DEFAULT_PORTS = {
  gateway: 4000,
  socialRest: 3001,
  surveysRest: 3002,
  contactsRest: 3003,
  metrics: 9464,
} as const;

describe('README', () => {
  it('shows no command that no test runs', () => {
    const unaccounted = shellBlocks
      .filter((block) => !RUN.has(block))
      .flatMap(commandsOf)
      .filter((command) => !NOT_RUN_HERE.some(([pattern]) => pattern.test(command)));
    expect(unaccounted).toEqual([]);
    expect(walkThrough.length).toBeGreaterThan(3);
    expect(tokenBlock).toBeDefined();
    expect(metricsBlock).toBeDefined();
  });

  describe('commands, run as written against `npm start`', () => {
    let platform: ChildProcess | undefined;
    let output = '';
    let dataDir: string;
    let workDir: string;
    const ports: Record<keyof typeof DEFAULT_PORTS, number> = { ...DEFAULT_PORTS };
    let env: NodeJS.ProcessEnv;

    /** The README's text for this test's ports: `localhost:3001` becomes the social REST port of this run, and so on. */
    const onOurPorts = (text: string) =>
      text.replace(/localhost:(\d{4})\b/g, (match, port: string) => {
        const part = (Object.keys(DEFAULT_PORTS) as Array<keyof typeof DEFAULT_PORTS>).find(
          (name) => DEFAULT_PORTS[name] === Number(port),
        );
        return part ? `localhost:${ports[part]}` : match;
      });

    /**
     * Runs commands in bash, in a folder of the test's own (files a command writes land there), with
     * `npm` run in the project. Variables set by one call (TOKEN) are kept for the next.
     */
    function shell(commands: string[], placeholders: Record<string, string> = {}): string {
      let script = commands.map(onOurPorts).join('\n');
      for (const [placeholder, value] of Object.entries(placeholders)) script = script.replaceAll(placeholder, value);
      const variables = [...new Set(commands.flatMap((command) => /^([A-Z_]+)=/.exec(command)?.[1] ?? []))];
      const result = spawnSync(
        'bash',
        [
          '-c',
          [
            'set -euo pipefail',
            `npm() { command npm --prefix ${JSON.stringify(PROJECT_ROOT)} "$@"; }`,
            '[ -f state.sh ] && source state.sh',
            script,
            ...variables.map((name) => `declare -p ${name} >> state.sh`),
          ].join('\n'),
        ],
        { cwd: workDir, env, encoding: 'utf8', timeout: 120_000 },
      );
      if (result.status !== 0)
        throw new Error(
          `exit ${result.status}:\n${script}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`,
        );
      return result.stdout;
    }

    /** Lines of npm start's JSON log. */
    const logLines = () =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);

    beforeAll(async () => {
      dataDir = mkdtempSync(path.join(os.tmpdir(), 'readme-data-'));
      workDir = mkdtempSync(path.join(os.tmpdir(), 'readme-work-'));
      // Every port at once, so no two parts are handed the same one.
      const parts = Object.keys(ports) as Array<keyof typeof ports>;
      const [social, surveys, contacts, ...partPorts] = await freePorts(3 + parts.length);
      parts.forEach((part, index) => (ports[part] = partPorts[index]));
      const { NODE_OPTIONS: _jestFlags, NODE_ENV: _jestEnv, DATABASE_URL: _database, ...inherited } = process.env;
      env = {
        ...inherited,
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
        GATEWAY_PORT: String(ports.gateway),
        SOCIAL_REST_PORT: String(ports.socialRest),
        SURVEYS_REST_PORT: String(ports.surveysRest),
        CONTACTS_REST_PORT: String(ports.contactsRest),
        METRICS_PORT: String(ports.metrics),
        SOCIAL_SUBGRAPH_PORT: String(social),
        SURVEYS_SUBGRAPH_PORT: String(surveys),
        CONTACTS_SUBGRAPH_PORT: String(contacts),
      };
      const [start] = commandsOf(walkThrough[0]).filter((command) => command === 'npm start');
      expect(start).toBe('npm start');
      // Its own process group, so that the stop below reaches npm and the platform under it.
      platform = spawn('bash', ['-c', start], {
        cwd: PROJECT_ROOT,
        env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      platform.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      platform.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const deadline = Date.now() + 150_000;
      while (!output.includes('Platform running')) {
        if (platform.exitCode !== null || Date.now() > deadline)
          throw new Error(`npm start did not come up:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }, 180_000);

    afterAll(async () => {
      if (platform?.pid && platform.exitCode === null) {
        const exited = new Promise((resolve) => platform!.once('exit', resolve));
        process.kill(-platform.pid, 'SIGINT');
        await exited;
      }
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      if (workDir) rmSync(workDir, { recursive: true, force: true });
    }, 30_000);

    it('walks through the first ten minutes: a token, a post, a contact, a survey sign-in, the same data in the explorer', async () => {
      const [, writes, signIn, explorerQuery, fromTheShell] = walkThrough;
      expect([writes.lang, signIn.lang, explorerQuery.lang, fromTheShell.lang]).toEqual(['sh', 'sh', 'graphql', 'sh']);

      const written = shell(commandsOf(writes));
      expect(written).toContain('"content":"Hello from the first ten minutes"');
      expect(written).toContain('"firstName":"Ada"');

      // The token of the sign-in mail, read from npm start's log as the README says (the mail goes out just after the answer).
      const signInMail = () =>
        logLines().find((line) => line.msg === 'mail not sent (SMTP_URL is unset)' && line.to === 'me@example.com');
      for (let waited = 0; !signInMail() && waited < 10_000; waited += 100)
        await new Promise((resolve) => setTimeout(resolve, 100));
      const mail = signInMail();
      const magicToken = /[?&]token=([\w-]+)/.exec(String(mail?.text))?.[1];
      expect(magicToken).toBeTruthy();
      const signedIn = shell(commandsOf(signIn), { 'PASTE-THE-TOKEN': magicToken! });
      expect(signedIn).toContain('"email":"me@example.com"');
      expect(signedIn).toContain('"venueName":"Town Hall"');

      const token = /declare -- TOKEN="([^"]+)"/.exec(readFileSync(path.join(workDir, 'state.sh'), 'utf8'))?.[1];
      expect(token).toBeTruthy();
      if (existsSync(CHROMIUM_PATH)) {
        const browser = await launchBrowser();
        try {
          const page = await browser.context.newPage();
          await page.goto(onOurPorts('http://localhost:4000/graphiql'));
          await page.waitForSelector('.graphiql-container .graphiql-query-editor .CodeMirror', { timeout: 20_000 });
          const shown = (await runInGraphiQL(page, 'Ada', {
            query: explorerQuery.text,
            headers: { Authorization: `Bearer ${token}` },
          })) as any;
          expect(shown.data.posts.nodes).toContainEqual({
            content: 'Hello from the first ten minutes',
            status: 'DRAFT',
          });
          expect(shown.data.contacts.nodes).toContainEqual({
            firstName: 'Ada',
            lastName: 'Lovelace',
            email: 'ada@example.com',
          });
        } finally {
          await browser.close();
        }
      } else {
        console.warn(
          `No Chromium at ${CHROMIUM_PATH}: the explorer step ran its query over HTTP instead of in GraphiQL`,
        );
        const answer = shell([
          `curl -fsS localhost:4000/graphql -H "Authorization: Bearer $TOKEN" -H 'Content-Type: ` +
            `application/json' -d ${JSON.stringify(JSON.stringify({ query: explorerQuery.text }))}`,
        ]);
        expect(answer).toContain('Hello from the first ten minutes');
      }

      const everything = JSON.parse(shell(commandsOf(fromTheShell)));
      expect(everything.errors).toBeUndefined();
      expect(everything.data).toEqual({
        posts: { nodes: [{ content: 'Hello from the first ten minutes' }] },
        contacts: { nodes: [{ firstName: 'Ada' }] },
        surveys: { nodes: [{ venueName: 'Town Hall' }] },
      });
    });

    it('scrapes the metrics as the README shows', () => {
      const [scrape, ...rest] = commandsOf(metricsBlock!);
      expect(rest).toEqual([]);
      // The walk-through above wrote through the REST services; their answers are counted by route pattern.
      expect(shell([scrape])).toMatch(
        /^http_requests_total\{part="contacts-rest",route="\/api\/contacts",method="POST",status="201"\} \d+$/m,
      );
    });

    it('shows the REST headers as the README says', () => {
      const [
        created,
        listed,
        signIn,
        refused,
        newContact,
        tagged,
        notModified,
        matched,
        stale,
        keyed,
        replayed,
        ...rest
      ] = commandsOf(headersBlock!);
      expect(rest).toEqual([]);
      expect(shell([created])).toMatch(/^HTTP\/1\.1 201 .*^location: \/api\/contacts\/[0-9a-f-]{36}\r?$/ims);
      expect(shell([listed])).toMatch(/^link: <\/api\/contacts\?limit=1&page=1>; rel="first", .*rel="last"\r?$/im);
      const limited = shell([signIn]);
      expect(limited).toMatch(/^HTTP\/1\.1 202 /);
      expect(limited).toMatch(/^ratelimit-policy: "surveys-sign-in-client";q=30;w=900, /im);
      expect(limited).toMatch(/^ratelimit: "surveys-sign-in-client";r=\d+;t=\d+, /im);
      expect(shell([refused])).toMatch(/^HTTP\/1\.1 401 .*^www-authenticate: Bearer error="invalid_token"\r?$/ims);

      shell([newContact]);
      expect(shell([tagged])).toMatch(/^HTTP\/1\.1 200 .*^etag: "1"\r?$/ims);
      const unchanged = shell([notModified]);
      expect(unchanged).toMatch(/^HTTP\/1\.1 304 /);
      expect(unchanged.split(/\r?\n\r?\n/)[1]).toBe('');
      const changed = shell([matched]);
      expect(changed).toMatch(/^HTTP\/1\.1 200 .*^etag: "2"\r?$/ims);
      expect(changed).toContain('"company":"Acme"');
      const refusedChange = shell([stale]);
      expect(refusedChange).toMatch(/^HTTP\/1\.1 412 .*^content-type: application\/problem\+json/ims);
      expect(refusedChange).toContain('"field":"If-Match"');
      expect(shell([tagged])).toContain('"company":"Acme"');

      const first = shell([keyed]);
      expect(first).toMatch(/^HTTP\/1\.1 201 /);
      expect(first).not.toMatch(/^idempotent-replayed:/im);
      const again = shell([replayed]);
      expect(again).toMatch(/^HTTP\/1\.1 201 .*^idempotent-replayed: true\r?$/ims);
      const bodyOf = (answer: string) => answer.split(/\r?\n\r?\n/)[1];
      expect(bodyOf(again)).toBe(bodyOf(first));
    });

    it('runs the background import commands', async () => {
      const [writeFile, start, job, errors, ...rest] = commandsOf(importBlock!);
      expect(rest).toEqual([]);
      shell([writeFile, start]);
      let answer: { status?: string } = {};
      for (let look = 0; look < 100 && answer.status !== 'succeeded'; look++) {
        answer = JSON.parse(shell([job])) as { status?: string };
        if (answer.status !== 'succeeded') await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(answer).toMatchObject({ status: 'succeeded', rows: 2, created: 1, errors: 1 });
      expect(shell([errors])).toBe('row,column,message\r\n3,email,must be a valid e-mail address\r\n');
    });

    it('runs the token and API key commands', () => {
      const commands = commandsOf(tokenBlock!);
      const [fullToken, scopedToken, postsWithToken, createKey, listKeys, revokeKey, help, ...rest] = commands;
      expect(rest).toEqual([]);
      // Without -s, npm prints its banner (`> federated-platform@0.1.0 token`) first; the token is the last line.
      const lastLine = (text: string) => text.trim().split('\n').at(-1);
      expect(lastLine(shell([fullToken]))).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      expect(lastLine(shell([scopedToken]))).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      expect(JSON.parse(shell([postsWithToken]))).toMatchObject({ data: expect.any(Array), page: 1 });
      expect(lastLine(shell([createKey]))).toMatch(/^\S{20,}$/);
      const listed = shell([listKeys]);
      const keyId = /^([0-9a-f-]{36})\s.*\breporting\b/m.exec(listed)?.[1];
      expect(keyId).toBeTruthy();
      expect(lastLine(shell([revokeKey], { KEY_ID: keyId! }))).toBe(`revoked ${keyId}`);
      expect(shell([listKeys])).toMatch(new RegExp(`^${keyId}\\s.*revoked `, 'm'));
      expect(shell([help])).toMatch(/^usage: npm run token/m);
    });
  });
});
