import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { composeSupergraph } from '../gateway/supergraph.js';
import { loadConfig } from '../lib/config.js';
import { PROJECT_ROOT } from '../lib/paths.js';

describe('checked-in schema', () => {
  it('matches the code and composes (run `npm run schema` after changing a subgraph)', async () => {
    const { subgraphs, supergraphSdl } = await composeSupergraph(loadConfig({}));
    const read = (name: string) => readFileSync(path.join(PROJECT_ROOT, 'schema', `${name}.graphql`), 'utf8');
    for (const { name, sdl } of subgraphs) expect({ name, sdl }).toEqual({ name, sdl: read(name) });
    expect(supergraphSdl).toBe(read('supergraph'));
  });
});
