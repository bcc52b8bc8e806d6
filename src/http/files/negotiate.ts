// The file server's third stage, the variant: the precompressed file the client prefers
// (Accept-Encoding, among the `precompressed` option's encodings).
import Negotiator from "negotiator";
import type { FileOptions } from "./options.js";
import type { Request, InternalRequest, Found } from "./types.js";
import { findFile } from "./open.js";
import { FileCache } from "./cache.js";

/** The precompressed variants, in the order preferred when the client likes several equally. */
export const VARIANTS: Record<string, string> = { br: ".br", zstd: ".zst", gzip: ".gz" };

export const NEGOTIATED = [...Object.keys(VARIANTS), "identity"];

/**
 * A request for a file whose variants are looked for is answered, where it can be, from the
 * variant alone: the variant is opened first, and the file itself only checked to be a regular
 * file (a stat: no open, no read, no close), where opening the file and then its variant cost
 * twice the system calls. What is served is what opening the file first would serve: a
 * variant is only sent for a regular file (not for a directory, which is redirected, nor for
 * a file that is gone). `Unsure`: a variant could not be opened for another reason than its
 * absence; the file is then opened first after all, as before, and the error follows there.
 */
export class Unsure {
  constructor(readonly refusal: unknown) {}
}

/**
 * Opens the precompressed variant of `path` the client prefers, with its encoding: null when
 * the client accepts none that is there, an Unsure when one could not be opened (the error is
 * then the file's to meet again, once it is opened first).
 */
export async function chooseVariant(
  req: Request,
  path: string,
  options: FileOptions,
  cache: FileCache | null,
): Promise<(Found & { encoding: string }) | null | Unsure> {
  for (const encoding of encodingsWanted(req, options)) {
    const variantPath = path + VARIANTS[encoding];
    let variant: Found | null;
    try {
      variant = await findFile(variantPath, cache);
    } catch (err) {
      return new Unsure(err);
    }
    if (variant !== null) return { ...variant, encoding };
    cache?.noteMissing(variantPath);
  }
  return null;
}

/**
 * The precompressed variants to look for, best first: the encodings the client prefers to the
 * file itself, among those `options.precompressed` lists. None acceptable but the file itself
 * (even after "identity;q=0"): it is sent as it is, as @fastify/static and nginx's gzip_static
 * do, rather than a 406 the client can do nothing with.
 */
export function encodingsWanted(req: Request, options: FileOptions): readonly string[] {
  const accept = (req as InternalRequest).headerValue("accept-encoding");
  if (accept === undefined) return NONE;
  const encodings = encodingsFor(accept);
  return options.precompressed === true ? encodings : encodings.filter((encoding) => (options.precompressed as readonly string[]).includes(encoding));
}

export const NONE: readonly string[] = [];

/**
 * The encodings the client prefers to none (identity), best first, as negotiator orders them
 * (ties: br, zstd, gzip, identity). Clients send few distinct Accept-Encoding values, and
 * negotiating one costs more than the rest of choosing a variant: each is negotiated once, the
 * answers kept (so many, so a client varying its header can't grow them).
 */
export const ENCODINGS = new Map<string, readonly string[]>();

export function encodingsFor(accept: string): readonly string[] {
  let encodings = ENCODINGS.get(accept);
  if (encodings === undefined) {
    const negotiator = new Negotiator({ headers: { "accept-encoding": accept } }) as Negotiator & {
      encodings(available: string[], options: { preferred: string[] }): string[];
    };
    const all = negotiator.encodings(NEGOTIATED, { preferred: NEGOTIATED });
    const identity = all.indexOf("identity");
    encodings = identity === -1 ? all : all.slice(0, identity);
    if (ENCODINGS.size < 1000) ENCODINGS.set(accept, encodings);
  }
  return encodings;
}
