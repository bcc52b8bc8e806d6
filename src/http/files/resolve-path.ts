// The file server's first stage, the path: a request's path below the root, decoded once, and
// refused where it could leave the root.
import { join, sep } from "node:path";
import { HttpError } from "../../base/errors.js";
import type { FileOptions } from "./options.js";

/**
 * `join(base, relative)` for a decoded request path (it starts with "/"): the two put together
 * when there is nothing to normalize (no "//", and no segment starting with "." once safePath
 * has let it through), as almost every request's path is; else join's.
 */
export function below(base: string, relative: string): string {
  if (sep !== "/" || relative.charCodeAt(0) !== 47 /* / */ || relative.includes("//") || relative.includes("/.")) return join(base, relative);
  return base.length === 1 ? relative : base + relative;
}

/** Whether the path names a file rather than a directory (which ends in "/"): the only kind with precompressed variants of its own. */
export function namesFile(relative: string): boolean {
  return relative !== "" && relative.charCodeAt(relative.length - 1) !== 47; /* / */
}

/**
 * The path of the request below the static root, decoded once: null for a dotfile that is
 * ignored (so the request falls through), an HttpError for one that is refused, or for a
 * spelling that could name something outside the root: `..` segments (written `..`, `%2e%2e`,
 * `%2e.` or across an encoded `%2f`), a backslash (a separator on Windows, raw or `%5c`), NUL,
 * or a malformed or overlong UTF-8 sequence (`%c0%ae`, which decodeURIComponent refuses).
 * Decoding once means `%252e%252e` names the literal file `%2e%2e` inside the root.
 */
export function safePath(raw: string, options: FileOptions, urlEncoded = true): string | null | HttpError {
  let path = raw;
  if (urlEncoded && raw.includes("%")) {
    try {
      path = decodeURIComponent(raw);
    } catch {
      return new HttpError(400, `Malformed percent-encoding in the path ${raw}`);
    }
  }
  if (path.includes("\0")) return new HttpError(400, `A NUL byte in the path ${JSON.stringify(raw)}`);
  if (path.includes("\\")) return new HttpError(400, `A backslash in the path ${raw}: use "/"`);
  // No segment starts with "." (no "..", no dotfile) unless one follows a "/" or begins the path: most paths are looked at no further.
  if (!path.includes("/.") && path.charCodeAt(0) !== 46 /* . */) return path;
  const segments = path.split("/");
  if (segments.includes("..")) return new HttpError(403, `Refusing the path ${raw}: ".." would leave the root`);
  if (segments.some((segment) => segment.startsWith(".") && segment !== ".")) {
    const dotfiles = options.dotfiles ?? "ignore";
    if (dotfiles === "deny") return new HttpError(403, `Refusing the path ${raw}: dotfiles are not served (the dotfiles option is "deny")`);
    if (dotfiles === "ignore") return null;
  }
  return path;
}
