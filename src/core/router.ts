/**
 * Path matching: a Map for fully static paths (one hash lookup, the common
 * case) and a segment trie for paths with `:params` or a trailing `*`.
 *
 * Priority at each segment is static > param > wildcard, with backtracking,
 * so `/users/me` wins over `/users/:id`, which wins over `/users/*`.
 * A single trailing slash is ignored (`/admin/` finds `/admin`).
 */

/** The name a pattern's segment declares: `:id` -> "id", `*` -> "*", a static segment -> never. */
type SegmentParam<S extends string> = S extends `:${infer Name}` ? Name : S extends "*" ? "*" : never;
type ParamNames<P extends string> = P extends `${infer Head}/${infer Rest}` ? SegmentParam<Head> | ParamNames<Rest> : SegmentParam<P>;

/**
 * The params a path pattern declares, as `req.params` holds them: `"/users/:id/*"` ->
 * `{ id: string; "*": string }`, a static path -> `{}`. A path that is not a literal (a `string`)
 * gives `Record<string, string>`.
 */
export type PathParams<P extends string> = string extends P ? Record<string, string> : { [K in ParamNames<P>]: string };

/** A group prefix and a path joined, as types: a `string` either side gives `string`. */
export type JoinedPath<Prefix extends string, Path extends string> = string extends Prefix | Path ? string : `${Prefix}/${Path}`;

/** What a lookup answers: the route for the method, or null when only other methods exist. */
export interface Match<T> {
  readonly data: T | null;
  /** The `Allow` header for this path. */
  readonly allow: string;
  /** Param values in pattern order (the wildcard's rest last); null for static paths. */
  readonly values: string[] | null;
}

/** Every route registered at one path pattern, by method. */
class PathEntry<T> {
  private readonly byMethod = new Map<string, T>();
  /** Methods given explicitly (HEAD is implied by GET unless registered itself). */
  private readonly explicit = new Set<string>();
  allow = "";
  /** Precomputed answers for static paths, so a static hit allocates nothing. */
  readonly staticMatches = new Map<string, Match<T>>();
  notAllowed: Match<T> = { data: null, allow: "", values: null };

  add(method: string, data: T, pattern: string): void {
    if (this.explicit.has(method)) {
      throw new Error(`Route ${method === "*" ? "ALL" : method} ${pattern} is registered twice; register it once with all its handlers`);
    }
    this.explicit.add(method);
    this.byMethod.set(method, data);
    if (method === "GET" && !this.explicit.has("HEAD")) this.byMethod.set("HEAD", data);
    const methods = new Set(this.byMethod.keys());
    methods.delete("*");
    methods.add("OPTIONS");
    this.allow = this.explicit.has("*") ? "" : [...methods].sort().join(", ");
    for (const [m, routeData] of this.byMethod) this.staticMatches.set(m, { data: routeData, allow: this.allow, values: null });
    this.notAllowed = { data: null, allow: this.allow, values: null };
  }

  route(method: string): T | undefined {
    return this.byMethod.get(method) ?? this.byMethod.get("*");
  }
}

class TrieNode<T> {
  readonly children = new Map<string, TrieNode<T>>();
  param: TrieNode<T> | null = null;
  wildcard: PathEntry<T> | null = null;
  entry: PathEntry<T> | null = null;
}

export class Router<T> {
  private readonly staticPaths = new Map<string, PathEntry<T>>();
  private readonly root = new TrieNode<T>();

  /** Registers `data` for method + pattern and returns the pattern's param names in order. */
  add(method: string, pattern: string, data: T): string[] {
    const path = normalizePattern(pattern);
    const segments = path === "/" ? [] : path.slice(1).split("/");
    const names: string[] = [];
    let entry: PathEntry<T>;
    if (segments.every((s) => s[0] !== ":" && s !== "*")) {
      entry = this.staticPaths.get(path) ?? new PathEntry<T>();
      this.staticPaths.set(path, entry);
    } else {
      let node = this.root;
      entry = undefined as unknown as PathEntry<T>;
      for (let i = 0; i < segments.length; i++) {
        const segment = segments[i]!;
        if (segment === "*") {
          if (i !== segments.length - 1) throw new Error(`Route ${pattern}: "*" is only allowed as the last segment`);
          names.push("*");
          entry = node.wildcard ??= new PathEntry<T>();
        } else if (segment[0] === ":") {
          const name = segment.slice(1);
          const problem = segmentProblem(segment);
          if (problem !== null) throw new Error(`Route ${pattern}: ${problem}`);
          if (names.includes(name))
            throw new Error(`Route ${pattern}: param "${name}" appears twice (a group's prefix counts too); give each a name of its own`);
          names.push(name);
          node = node.param ??= new TrieNode<T>();
        } else {
          let child = node.children.get(segment);
          if (child === undefined) node.children.set(segment, (child = new TrieNode<T>()));
          node = child;
        }
      }
      if (segments[segments.length - 1] !== "*") entry = node.entry ??= new PathEntry<T>();
    }
    entry.add(method, data, pattern);
    return names;
  }

  find(method: string, path: string): Match<T> | null {
    let entry = this.staticPaths.get(path);
    if (entry === undefined && path.length > 1 && path.charCodeAt(path.length - 1) === 47 /* / */) {
      entry = this.staticPaths.get(path.slice(0, -1));
    }
    if (entry !== undefined) {
      const hit = entry.staticMatches.get(method) ?? entry.staticMatches.get("*");
      if (hit !== undefined) return hit;
      // A dynamic route may still serve this method (GET /users/me static, DELETE /users/:id).
      const dynamic = this.findDynamic(method, path);
      return dynamic !== null && dynamic.data !== null ? dynamic : entry.notAllowed;
    }
    return this.findDynamic(method, path);
  }

  private findDynamic(method: string, path: string): Match<T> | null {
    const values: string[] = [];
    const found = matchNode(this.root, path, 1, values);
    if (found === null) return null;
    return { data: found.route(method) ?? null, allow: found.allow, values };
  }
}

function matchNode<T>(node: TrieNode<T>, path: string, start: number, values: string[]): PathEntry<T> | null {
  if (start >= path.length) {
    if (node.entry !== null) return node.entry;
    if (node.wildcard !== null) {
      values.push("");
      return node.wildcard;
    }
    return null;
  }
  let end = path.indexOf("/", start);
  if (end === -1) end = path.length;
  const segment = path.slice(start, end);
  const child = node.children.get(segment);
  if (child !== undefined) {
    const found = matchNode(child, path, end + 1, values);
    if (found !== null) return found;
  }
  if (node.param !== null && segment !== "") {
    const depth = values.length;
    values.push(segment);
    const found = matchNode(node.param, path, end + 1, values);
    if (found !== null) return found;
    values.length = depth;
  }
  if (node.wildcard !== null) {
    values.push(path.slice(start));
    return node.wildcard;
  }
  return null;
}

/**
 * What is wrong with one segment of a path pattern, in words that say how to write it, or null.
 * Cog's syntax is static segments, `:name` params (a whole segment each) and a final `*`; the
 * regex-style forms of other routers would otherwise be taken as literal text and never match.
 */
function segmentProblem(segment: string): string | null {
  if (segment[0] === ":") {
    const name = segment.slice(1);
    if (/^[A-Za-z_$][\w$]*$/.test(name)) return null;
    if (name.endsWith("?")) return `optional params ("${segment}") are not supported: register the path with and without it`;
    if (name.includes("(")) return `regex constraints on params ("${segment}") are not supported: validate the param with a params schema (e.g. an integer)`;
    if (/[*+]$/.test(name)) return `repeating params ("${segment}") are not supported: end the path with "*" for the rest of it (req.params["*"])`;
    return `invalid param name "${name}": a param is a whole segment, ":" then letters, digits, "_" or "$" (e.g. "/files/:name"; split "a.b" values in the handler)`;
  }
  if (segment !== "*" && segment.includes("*"))
    return `"*" matches the rest of the path as a segment of its own, at the end ("/files/*"), not inside "${segment}"`;
  if (segment.includes("?")) return `"?" starts the query string, which routes never match: declare the query with a schema, or read req.query`;
  if (/[(){}[\]]/.test(segment)) return `"${segment}" looks like another router's syntax; Cog's params are ":name" segments (e.g. "/users/:id")`;
  return null;
}

/**
 * Checks a path given to a registering method (`where` names it, e.g. `GET users`) before it is
 * joined to its group's prefix: a string that starts with "/", in Cog's syntax. A mistake throws
 * at registration with the reason, rather than registering a route that never matches.
 */
export function checkPath(path: unknown, where: string): string {
  if (typeof path !== "string")
    throw new TypeError(
      `${where}: a path must be a string that starts with "/", got ${path === null ? "null" : typeof path}${typeof path === "number" ? ` (write "/${path}")` : ""}`,
    );
  if (path[0] !== "/") throw new TypeError(`${where}: a path must start with "/": write "/${path}"`);
  for (const segment of path.slice(1).split("/")) {
    const problem = segmentProblem(segment);
    if (problem !== null) throw new TypeError(`${where}: ${problem}`);
  }
  return path;
}

/** `"admin/"` -> `"/admin"`, `""` -> `"/"`: one spelling per pattern. */
export function normalizePattern(pattern: string): string {
  if (typeof pattern !== "string") throw new TypeError(`A route path must be a string, got ${typeof pattern}`);
  let path = pattern.startsWith("/") ? pattern : `/${pattern}`;
  path = path.replace(/\/{2,}/g, "/");
  if (path.length > 1 && path.endsWith("/")) path = path.slice(0, -1);
  return path;
}

/** Joins a group prefix and a route path: `("/admin", "/")` -> `"/admin"`. */
export function joinPaths(prefix: string, path: string): string {
  return normalizePattern(`${prefix}/${path}`);
}

/** How much of a route pattern's traffic a middleware prefix covers. */
export type Coverage = "all" | "some" | "none";

/**
 * Decided once at registration: does `use(prefix, mw)` apply to every request
 * of `pattern`, to none, or to some (a param or wildcard may or may not equal
 * the prefix's segment, so the path is checked per request)?
 */
export function prefixCoverage(prefix: string, pattern: string): Coverage {
  if (prefix === "/") return "all";
  const want = prefix.slice(1).split("/");
  const have = pattern === "/" ? [] : pattern.slice(1).split("/");
  let certain = true;
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const h = have[i];
    if (h === undefined) return "none";
    if (h === "*") return "some";
    if (w[0] === ":") continue;
    if (h[0] === ":") certain = false;
    else if (w !== h) return "none";
  }
  return certain ? "all" : "some";
}

/** A per-request test of whether a path lies under `prefix`, by whole segments. */
export function prefixMatcher(prefix: string): (path: string) => boolean {
  if (prefix === "/") return () => true;
  const source = prefix
    .slice(1)
    .split("/")
    .map((s) => (s[0] === ":" ? "[^/]+" : s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  const pattern = new RegExp(`^/${source}(?:/|$)`);
  return (path) => pattern.test(path);
}
