// The file server's second stage, the file: opened through fs.promises, its metadata read from the
// descriptor (the native engine opens its own on its loop: server.ts, `openedOnEngine`).
import { constants, promises as fs, type Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import type { OpenedFile } from "../../engines/contract/engine.js";
import { HttpError } from "../../base/errors.js";
import type { Opened, Found } from "./types.js";
import { FileCache } from "./cache.js";

/** Codes of a path that names nothing servable: the file is simply not there. */
export const MISSING = new Set(["ENOENT", "ENOTDIR", "ENAMETOOLONG", "ELOOP", "EISDIR"]);

/** A regular file at `path` (from the cache if there is one), or null if there is none. */
export async function findFile(path: string, cache: FileCache | null): Promise<Found | null> {
  const cached = cache?.get(path);
  if (cached !== undefined) return cached;
  const opened = await openFile(path);
  if (opened === null) return null;
  if (!opened.stat.isFile) {
    await opened.file.close();
    return null;
  }
  const found: Found = { size: opened.stat.size, mtimeMs: opened.stat.mtimeMs, file: opened.file, bytes: null };
  return cache === null ? found : cache.keep(path, found);
}

/** Whether `path` is a regular file, by its stat (or the cache's word), without opening it. */
export async function isRegularFile(path: string, cache: FileCache | null): Promise<boolean> {
  const cached = cache?.get(path);
  if (cached) return true;
  if (cache?.isRegular(path)) return true;
  try {
    const regular = (await fs.stat(path)).isFile();
    if (regular) cache?.noteRegular(path);
    return regular;
  } catch {
    return false;
  }
}

/**
 * Opens a file through fs.promises and reads its metadata from the descriptor, so what is sent
 * is what was looked at, however the path changes meanwhile; null when nothing is there.
 * Non-blocking, so a FIFO under the root can't hold the open (and a thread of libuv's pool)
 * until a writer comes; it is then refused as not a regular file. (The engine's OPEN_FILE
 * opens the same way: see `openedOnEngine`.)
 */
export async function openFile(path: string): Promise<Opened | null> {
  let file: FileHandle;
  try {
    file = await fs.open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    return refusedOpen(err as NodeJS.ErrnoException, path);
  }
  try {
    return { file, stat: statOf(await file.stat()) };
  } catch (err) {
    await file.close();
    throw err;
  }
}

/** A path that didn't open: null when nothing is there, a 403 when it may not be read, else the error. */
export function refusedOpen(err: NodeJS.ErrnoException, path: string): null {
  const code = err.code;
  if (code !== undefined && MISSING.has(code)) return null;
  if (code === "EACCES" || code === "EPERM") throw new HttpError(403, `The file ${path} can't be read (${code}): check its permissions`, { cause: err });
  throw err;
}

export function statOf(stat: Stats): OpenedFile {
  return { isFile: stat.isFile(), isDirectory: stat.isDirectory(), size: stat.size, mtimeMs: stat.mtimeMs };
}
