/**
 * The servers the benchmarks load, each in a child process of its own so the load generator does
 * not share their event loop: `platform` (the whole platform, as `npm start` runs one worker, on free
 * ports) or `floor` (bench/floor.ts). Each sends `{ urls }` over IPC when ready and stops on SIGTERM.
 *
 *   fork('dist/bench/serve.js', ['platform'])    with BENCH_PLATFORM_DATABASE_URL
 */
import 'reflect-metadata';
import cluster from 'node:cluster';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '#lib/observability/logger.js';
import { startPlatform } from '#scripts/platform.js';
import { benchPlatformConfig } from './support.js';
import { serveFloor } from './floor.js';

/** The whole platform in this (child) process, as `npm start` runs it with one worker, on free ports. */
async function servePlatform(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-platform-'));
  const config = benchPlatformConfig(dataDir, process.env.BENCH_PLATFORM_DATABASE_URL);
  const platform = await startPlatform(config, createLogger(config));
  const local = (url: string) => url.replace('//localhost:', '//127.0.0.1:');
  process.send?.({
    urls: {
      rest: local(platform.rest.contacts.url),
      gateway: local(platform.gateway.url),
      contactsSubgraph: local(platform.subgraphs.contacts.url),
      socialSubgraph: local(platform.subgraphs.social.url),
      surveysSubgraph: local(platform.subgraphs.surveys.url),
    },
  });
  process.on('SIGTERM', () => {
    void platform.close().finally(() => {
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    });
  });
}

/**
 * The floor, in one process, or with BENCH_FLOOR_WORKERS > 1 in that many node:cluster workers sharing
 * one port (as npm start shares its ports): the primary sends the URL once every worker listens.
 */
async function serveFloorChild(): Promise<void> {
  const workers = Number(process.env.BENCH_FLOOR_WORKERS ?? 1);
  if (workers > 1 && cluster.isPrimary) {
    let ready = 0;
    for (let number = 0; number < workers; number++) {
      cluster.fork().on('message', (message: { urls: Record<string, string> }) => {
        if (++ready === workers) process.send?.(message);
      });
    }
    process.on('SIGTERM', () => {
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
      cluster.on('exit', () => Object.keys(cluster.workers ?? {}).length === 0 && process.exit(0));
    });
    return;
  }
  const floor = await serveFloor(process.env.BENCH_PLATFORM_DATABASE_URL);
  process.send?.({ urls: { floor: floor.url } });
  process.on('SIGTERM', () => void floor.close().finally(() => process.exit(0)));
}

if (process.argv[2] === 'platform') await servePlatform();
else if (process.argv[2] === 'floor') await serveFloorChild();
else throw new Error('usage: serve.js platform|floor');
