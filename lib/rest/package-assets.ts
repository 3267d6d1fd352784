import { createRequire } from 'node:module';
import path from 'node:path';
import express, { type Router } from 'express';

/** A browser file of an installed npm package, served under a name that holds the package's version. */
export interface PackageAsset {
  /** The package version is in the name, so a browser may keep it for good. */
  name: string;
  file: string;
}

const require = createRequire(import.meta.url);
const ONE_YEAR_MS = 365 * 24 * 60 * 60 * 1000;

/** A file of an installed npm package, found by the package's folder (browser builds are rarely among a package's exports). */
export function packageAsset(pkg: string, file: string, extension: string): PackageAsset {
  const manifest = require.resolve(`${pkg}/package.json`);
  const { version } = require(manifest) as { version: string };
  return { name: `${pkg}-${version}${extension}`, file: path.join(path.dirname(manifest), file) };
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
