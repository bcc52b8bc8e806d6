import { statSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, extname, join, resolve } from "node:path";
import { nextTick } from "../base/loop.js";

/** A template engine as Express calls it: `(path, options, callback)`. */
export type TemplateEngine = (path: string, options: object, callback: (err: Error | null, html?: string) => void) => void;

export interface ViewOptions {
  defaultEngine?: string;
  root: string | string[];
  engines: Record<string, TemplateEngine>;
}

/**
 * An engine named by a view's extension (`hbs` for `.hbs`): required from here, as Express
 * requires it from its own folder, else from the working directory (where an app's own
 * dependencies are when this package is linked rather than installed beside them).
 */
function requireEngine(name: string): unknown {
  try {
    return createRequire(import.meta.url)(name);
  } catch (err) {
    if ((err as { code?: string }).code !== "MODULE_NOT_FOUND") throw err;
    return createRequire(join(process.cwd(), "index.js"))(name);
  }
}

/**
 * A view, as Express 5's `view` setting makes it: the template file for a name (looked up in
 * the `views` directories, with the default engine's extension when the name has none, or as
 * `<name>/index.<ext>`), and its engine. An app may set its own class with `app.set("view", …)`.
 */
export class View {
  readonly defaultEngine: string | undefined;
  readonly ext: string;
  readonly name: string;
  readonly root: string | string[];
  readonly engine: TemplateEngine;
  readonly path: string | undefined;

  constructor(name: string, options: ViewOptions) {
    this.defaultEngine = options.defaultEngine;
    this.name = name;
    this.root = options.root;
    let ext = extname(name);
    let file = name;
    if (!ext && !this.defaultEngine) throw new Error("No default engine was specified and no extension was provided.");
    if (!ext) {
      ext = this.defaultEngine![0] === "." ? this.defaultEngine! : `.${this.defaultEngine}`;
      file += ext;
    }
    this.ext = ext;
    if (!options.engines[ext]) {
      const module = ext.slice(1);
      const engine = (requireEngine(module) as { __express?: TemplateEngine }).__express;
      if (typeof engine !== "function") throw new Error(`Module "${module}" does not provide a view engine.`);
      options.engines[ext] = engine;
    }
    this.engine = options.engines[ext]!;
    this.path = this.lookup(file);
  }

  /** The first of the roots that holds the file. */
  lookup(name: string): string | undefined {
    let found: string | undefined;
    for (const root of ([] as string[]).concat(this.root)) {
      if (found) break;
      const location = resolve(root, name);
      found = this.resolve(dirname(location), basename(location));
    }
    return found;
  }

  /** Renders; the callback never runs before `render` returns, even for an engine that calls back at once. */
  render(options: object, callback: (err: Error | null, html?: string) => void): void {
    let sync = true;
    this.engine(this.path!, options, function (this: unknown, ...args) {
      if (!sync) return callback.apply(this, args);
      nextTick(() => callback.apply(this, args));
    });
    sync = false;
  }

  /** `dir/file`, or `dir/<file without ext>/index<ext>`, whichever is a file. */
  resolve(dir: string, file: string): string | undefined {
    const direct = join(dir, file);
    if (isFile(direct)) return direct;
    const index = join(dir, basename(file, this.ext), `index${this.ext}`);
    if (isFile(index)) return index;
    return undefined;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
