// How files are sent, by `serveStatic` and `res.sendFile`: the options, types only.

/** How a file is sent, by `serveStatic` and `res.sendFile` alike. */
export interface FileOptions {
  /** Cache-Control's max-age, in seconds (as `CookieOptions.maxAge`; Express's serve-static takes milliseconds). Default 0. */
  maxAge?: number;
  /** Adds `immutable` to Cache-Control: for files whose name changes with their content (`app.3f2a1c.js`). */
  immutable?: boolean;
  /** A strong ETag from the file's size and modification time. Default true. */
  etag?: boolean;
  /** Last-Modified from the file's modification time. Default true. */
  lastModified?: boolean;
  /** Answers `Range: bytes=…` with 206 (and advertises Accept-Ranges). Default true. */
  acceptRanges?: boolean;
  /**
   * Serves `file.br`, `file.zst` or `file.gz` from beside `file` when the client accepts that
   * encoding (Accept-Encoding, q-values honoured), with Content-Encoding and `Vary: Accept-Encoding`.
   * `true` for all three, or a list of the encodings to look for. Default false (no extra lookups).
   */
  precompressed?: boolean | readonly ("br" | "gzip" | "zstd")[];
  /**
   * Paths with a segment starting with "." (`.env`, `.git/config`): "ignore" (default) treats
   * them as missing, "deny" answers 403, "allow" serves them.
   */
  dotfiles?: "ignore" | "deny" | "allow";
  /** Extra headers for every file sent. */
  headers?: Record<string, string>;
}

export interface StaticOptions extends FileOptions {
  /** The file served for a directory's URL (ending in "/"); false for none. Default "index.html". */
  index?: string | false;
  /** A directory asked for without its trailing slash is redirected (301) to it. Default true. */
  redirect?: boolean;
  /**
   * What is not found (and methods other than GET and HEAD) goes on to the next handler, so the
   * app's routes and 404 follow. With false, a missing file is a 404 and other methods a 405 here.
   * Default true.
   */
  fallthrough?: boolean;
  /**
   * Keeps small files in memory from their first request on, so they are not read from disk
   * again: only for files that don't change while the app runs (a build's output). `true` keeps
   * files up to 256 KiB, 64 MiB in all; or give the limits. Default false: read on every request.
   */
  cache?: boolean | { maxFileBytes?: number; maxBytes?: number };
}

export interface SendFileOptions extends FileOptions {
  /** The directory `path` is relative to; `path` may then not climb out of it. Without it, `path` must be absolute. */
  root?: string;
}
