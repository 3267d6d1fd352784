import type { Config } from './config.js';
import type { Identity } from './identity.js';
// pino's own type: the foundation imports nothing from the rooms above it.
import type { Logger } from 'pino';

/** What every part of the platform is started with: no globals, everything passed in. */
export interface Deps {
  config: Config;
  logger: Logger;
  identity: Identity;
}

/** A started part (subgraph, gateway, REST adapter, worker) that can be stopped. */
export interface RunningPart {
  name: string;
  url: string;
  close(): Promise<void>;
}
