// serveStatic's optional in-memory cache of small files (the `cache` option), beside the opening stage.
import type { StaticOptions } from "./options.js";
import type { Found } from "./types.js";

/**
 * `serveStatic`'s optional in-memory cache: small files' bytes and metadata, kept from their
 * first request on and never read again (so only for files that don't change while the app
 * runs), which precompressed variants are missing, and which files served by a variant are
 * regular files (see `Unsure`). Bounded in total bytes and entries.
 */
export class FileCache {
  private readonly files = new Map<string, Found>();
  private readonly missing = new Set<string>();
  private readonly regular = new Set<string>();
  private bytes = 0;
  constructor(
    private readonly maxFileBytes: number,
    private readonly maxBytes: number,
  ) {}

  get(path: string): Found | null | undefined {
    return this.files.get(path) ?? (this.missing.has(path) ? null : undefined);
  }

  noteMissing(path: string): void {
    if (this.missing.size < 10_000) this.missing.add(path);
  }

  isRegular(path: string): boolean {
    return this.regular.has(path);
  }

  noteRegular(path: string): void {
    if (this.regular.size < 10_000) this.regular.add(path);
  }

  /** Keeps an opened regular file that fits (read whole, then closed); else returns it as it is. */
  async keep(path: string, found: Found): Promise<Found> {
    if (found.file === null || found.size > this.maxFileBytes || this.bytes + found.size > this.maxBytes) return found;
    const bytes = Buffer.alloc(found.size);
    try {
      const { bytesRead } = await found.file.read(bytes, 0, found.size, 0);
      if (bytesRead < found.size) return found; // changed meanwhile: sent from disk this time (and reported there)
    } catch {
      return found;
    }
    await found.file.close();
    const kept: Found = { size: found.size, mtimeMs: found.mtimeMs, file: null, bytes };
    // Two first requests at once both read the file: count it once.
    if (!this.files.has(path)) this.bytes += found.size;
    this.files.set(path, kept);
    return kept;
  }
}

export function cacheOf(option: StaticOptions["cache"]): FileCache | null {
  if (option === undefined || option === false) return null;
  const limits = option === true ? {} : option;
  return new FileCache(limits.maxFileBytes ?? 256 * 1024, limits.maxBytes ?? 64 * 1024 * 1024);
}
