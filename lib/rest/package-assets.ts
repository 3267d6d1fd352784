import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import express, { type Router } from 'express';
import { PROJECT_ROOT } from '../paths.js';

/** A browser file of an installed npm package, served under a name that holds the package's version. */
export interface PackageAsset {
  /** The package version is in the name, so a browser may keep it for good. */
  name: string;
  file: string;
}

const require = createRequire(import.meta.url);
const ONE_YEAR_MS = 365 * 24 * 60 * 60 * 1000;

/**
 * Where each build puts the browser files of the development dependencies the pages load
 * (scripts/launch.mjs, `browserAssets`): a production install lacks the packages and has these copies.
 */
const BUILT_ASSETS = path.join(PROJECT_ROOT, 'dist', 'browser-assets');

/** The package's folder: installed (development), else the build's copy of its browser files (production). */
function packageFolder(pkg: string): string {
  try {
    return path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    const copy = path.join(BUILT_ASSETS, pkg);
    if (!existsSync(path.join(copy, 'package.json')))
      throw new Error(`${pkg} is neither installed nor copied by the build into ${copy} (npm run build)`);
    return copy;
  }
}

/** A file of an npm package, found by the package's folder (browser builds are rarely among a package's exports). */
export function packageAsset(pkg: string, file: string, extension: string): PackageAsset {
  const folder = packageFolder(pkg);
  const { version } = JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8')) as { version: string };
  return { name: `${pkg}-${version}${extension}`, file: path.join(folder, file) };
}

/** Serves each asset at `<prefix>/<name>`, cached for good (a new version is a new name). */
export function packageAssetsRouter(prefix: string, assets: PackageAsset[]): Router {
  const router = express.Router();
  for (const item of assets) {
    router.get(`${prefix}/${item.name}`, (_req, res, next) => {
      res.sendFile(item.file, { maxAge: ONE_YEAR_MS, immutable: true }, (error) => error && next(error));
    });
  }
  return router;
}
