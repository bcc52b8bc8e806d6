// uWebSockets.js builds fall back to a slow JS implementation when no native
// binary matches this Node; timing that would misreport the engine, so refuse.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

export function requireNativeUws() {
  const uws = require("uWebSockets.js");
  const native = Object.keys(require.cache).some((path) => path.includes("uWebSockets.js") && path.endsWith(".node"));
  if (!native) {
    console.error(`uWebSockets.js has no native build for Node ${process.version} (ABI ${process.versions.modules}) here; it would run its JS fallback`);
    process.exit(3);
  }
  return uws;
}
