import { fileURLToPath } from "node:url";

/**
 * The path of a file of the cog-http package itself (`package.json`, `native/…`, `prebuilds/…`),
 * for the module at `moduleUrl` (its `import.meta.url`) that sits `depth` folders below the
 * build's root. One source runs from three roots: src/ (under tsx), dist/ (the ES module build)
 * and dist/cjs/ (the CommonJS build, one folder deeper), so no module counts `../` on its own.
 */
export function packageFile(moduleUrl: string, depth: number, path: string): string {
  const buildRoot = new URL(depth === 0 ? "./" : "../".repeat(depth), moduleUrl);
  return fileURLToPath(new URL(buildRoot.pathname.endsWith("/dist/cjs/") ? `../../${path}` : `../${path}`, buildRoot));
}
