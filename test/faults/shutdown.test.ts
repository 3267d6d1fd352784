import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { createTestDatabase } from '#test/support/platform.js';
import { platformPorts } from '#test/support/ports.js';
import { startPlatformProcess } from '#test/support/process.js';

const startProcess = async (env: Record<string, string>) => (await startPlatformProcess(env)).child;

type Outcome =
  | { kind: 'answered'; status: number; connection: string | undefined; id?: string }
  | { kind: 'refused'; code: string }
  | { kind: 'cut'; code: string };

/**
 * One POST over a kept-alive connection of `agent`; how it ended. Refused: the connection was refused,
 * or a new connection was reset before any answer. The latter is the same refusal a moment later: the
 * kernel completes a handshake on its own while the listening socket is open, and resets what is still
 * queued there (or, in a cluster, what the primary accepted and no worker took any more) when it
 * closes; the request never reached the platform. Cut: a kept-alive connection reset under a request,
 * or an answer broken off, which would be the drain's fault.
 */
function post(agent: http.Agent, url: string, body: unknown): Promise<Outcome> {
  return new Promise((resolve) => {
    const request = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => {
          let id: string | undefined;
          try {
            id = (JSON.parse(text) as { id?: string }).id;
          } catch {
            // not JSON
          }
          resolve({ kind: 'answered', status: response.statusCode ?? 0, connection: response.headers.connection, id });
        });
        response.on('error', (error: NodeJS.ErrnoException) =>
          resolve({ kind: 'cut', code: error.code ?? error.message }),
        );
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => {
      const code = error.code ?? error.message;
      const refused = code === 'ECONNREFUSED' || (code === 'ECONNRESET' && !request.reusedSocket);
      resolve(refused ? { kind: 'refused', code } : { kind: 'cut', code });
    });
    request.end(JSON.stringify(body));
  });
}

describe('shutdown on SIGTERM under write load', () => {
  it('refuses new connections, answers every accepted request (Connection: close), loses no acknowledged write, and exits within the drain time', async () => {
    const database = await createTestDatabase();
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'shutdown-test-'));
    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      ...(database.url ? { DATABASE_URL: database.url } : {}),
    };
    Object.assign(env, await platformPorts());
    const contacts = `http://127.0.0.1:${env.CONTACTS_REST_PORT}`;
    try {
      const first = await startProcess(env);
      const exited = new Promise<number | null>((resolve) => first.once('exit', (code) => resolve(code)));
      const outcomes: Outcome[] = [];
      let signalledAt = 0;
      const lastAnswers: Outcome[] = [];
      const writers = Array.from({ length: 8 }, async (_unused, client) => {
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        for (let n = 0; ; n++) {
          const outcome = await post(agent, `${contacts}/api/contacts`, {
            firstName: `Writer ${client}`,
            email: `s${client}-${n}@shutdown.example`,
          });
          outcomes.push(outcome);
          if (outcome.kind !== 'answered') break;
          lastAnswers[client] = outcome;
        }
        agent.destroy();
      });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      signalledAt = Date.now();
      first.kill('SIGTERM');
      const code = await exited;
      const exitMs = Date.now() - signalledAt;
      await Promise.all(writers);

      expect(code).toBe(0);
      expect(exitMs).toBeLessThan(10_000);
      // Every request was answered in full, or refused at connect: none cut.
      expect(outcomes.filter((outcome) => outcome.kind === 'cut')).toEqual([]);
      const answered = outcomes.filter(
        (outcome): outcome is Extract<Outcome, { kind: 'answered' }> => outcome.kind === 'answered',
      );
      expect(new Set(answered.map((outcome) => outcome.status))).toEqual(new Set([201]));
      expect(answered.length).toBeGreaterThan(8);
      // Each client's last answer, during the drain, told it to go elsewhere next time.
      expect(lastAnswers.map((outcome) => (outcome.kind === 'answered' ? outcome.connection : outcome.kind))).toEqual(
        Array(8).fill('close'),
      );

      const second = await startProcess(env);
      try {
        for (const outcome of answered) {
          const read = await fetch(`${contacts}/api/contacts/${outcome.id}`);
          expect(read.status).toBe(200);
        }
        // And a request that was refused changed nothing: the writers' contacts are exactly the answered ones.
        const written = (await (await fetch(`${contacts}/api/contacts?search=shutdown&limit=1`)).json()) as {
          total: number;
        };
        expect(written.total).toBe(answered.length);
      } finally {
        const stopped = new Promise<number | null>((resolve) => second.once('exit', (exitCode) => resolve(exitCode)));
        second.kill('SIGTERM');
        expect(await stopped).toBe(0);
      }
    } finally {
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 400_000);
});
