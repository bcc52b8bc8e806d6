import type { Handler } from "../handler.js";
import { loadFiles } from "./load.js";
import type { StaticOptions } from "./options.js";

export type { FileOptions, SendFileOptions, StaticOptions } from "./options.js";

/**
 * Serves the files under `root`: `app.use("/static", serveStatic("public"))` answers
 * `GET /static/css/site.css` with `public/css/site.css`. Files are read from disk on every
 * request, with ETag and Last-Modified (304s), ranges (206), HEAD, `index.html` for
 * directories, and never anything outside `root` however the path is spelled.
 */
export function serveStatic(root: string, options: StaticOptions = {}): Handler {
  if (typeof root !== "string" || root === "") throw new TypeError('serveStatic(root) needs the directory to serve, e.g. serveStatic("public")');
  let handler: Handler | undefined;
  return function serveStatic(req, res, next) {
    if (handler !== undefined) return handler(req, res, next);
    return loadFiles().then((loaded) => (handler ??= loaded.staticHandler(root, options))(req, res, next));
  };
}
