// The answer's headers that depend on the file's name and the options: Content-Type, Cache-Control.
import { basename, sep } from "node:path";
import { contentType } from "mime-types";
import type { FileOptions } from "./options.js";
import type { Response } from "./types.js";

/** Cache-Control for the files sent with `options` (the default's string made once: a string made per response is hashed again wherever it is looked up). */
export const DEFAULT_CACHING = "public, max-age=0";

export function cacheControlOf(options: FileOptions): string {
  if (options.maxAge === undefined && options.immutable !== true) return DEFAULT_CACHING;
  return `public, max-age=${Math.max(0, Math.floor(options.maxAge ?? 0))}${options.immutable === true ? ", immutable" : ""}`;
}

/** The file's Content-Type: the one the app set, else its extension's. */
export function typeOf(res: Response, path: string): string {
  const set = res.get("content-type");
  return set !== undefined ? String(set) : typeByName(path);
}

/**
 * The Content-Type of a file: mime-types' for its name's extension (with the charset), kept by
 * extension (so many), as mime-types finds it: the name's last "." onward, or the whole name
 * without one.
 */
export const TYPES = new Map<string, string>();

export function typeByName(path: string): string {
  // The last "." of the name, found from the end (lastIndexOf is a call into V8's runtime, twice the whole of this).
  let dot = -1;
  for (let i = path.length - 1; i >= 0; i--) {
    const code = path.charCodeAt(i);
    if (code === 46 /* . */) {
      dot = i;
      break;
    }
    if (code === 47 /* / */ || (code === 92 /* \ */ && sep === "\\")) break;
  }
  const extension = dot !== -1 ? path.slice(dot + 1) : basename(path);
  let type = TYPES.get(extension);
  if (type === undefined) {
    type = contentType(basename(path)) || "application/octet-stream";
    if (TYPES.size < 1000) TYPES.set(extension, type);
  }
  return type;
}
