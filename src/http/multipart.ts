import type { Readable } from "node:stream";
import { HttpError } from "../base/errors.js";
import type { RequestSurface } from "../engines/contract/engine.js";

/** The request a multipart body is read from (a type of its own, so that this file and request.ts don't import each other). */
interface MultipartRequest extends RequestSurface {
  firstHeader(name: string): string | undefined;
}

/** A file in a multipart/form-data body, handed to `onFile` as it arrives. */
export interface UploadedFile {
  /** The form field's name. */
  readonly field: string;
  /** The name the client gave the file (never a path to trust: sanitize it before using it on disk). */
  readonly filename: string;
  readonly mimeType: string;
  /** Its bytes as they arrive. Read it to the end (or `resume()` it to skip it): the next parts wait for it. */
  readonly stream: Readable;
}

/** Limits on a multipart body; past one, `req.multipart()` rejects with a 413. */
export interface MultipartLimits {
  /** Largest file, in bytes. Default: none of its own (the route's bodyLimit bounds the whole body). */
  fileSize?: number;
  /** Most files. Default 10. */
  files?: number;
  /** Most non-file fields. Default 100. */
  fields?: number;
  /** Most parts, files and fields together. Default 110. */
  parts?: number;
  /** Largest field value, in bytes. Default 64 KiB. */
  fieldSize?: number;
}

export interface MultipartOptions {
  limits?: MultipartLimits;
  /**
   * Called for each file, in order, with its stream; the body is parsed on while the returned
   * promise (if any) settles, and `multipart()` waits for all of them. Without it, a file part
   * is a 400: a route that takes no files says so.
   */
  onFile?: (file: UploadedFile) => unknown;
}

/** Fields by name; a name sent more than once gives a list. */
export type FormFields = Record<string, string | string[]>;

/** @fastify/busboy, loaded on the first multipart body (an app that takes none never loads it). */
let busboy: Promise<typeof import("@fastify/busboy").Busboy> | null = null;

/**
 * Reads a multipart/form-data body with @fastify/busboy (fastify's maintained fork of busboy):
 * fields into an object, files as streams to `onFile`. A body that is not multipart (or is
 * compressed) is a 415,
 * a malformed one (no boundary, cut short) a 400, one past a limit a 413. The body arrives as a
 * stream (multipart routes always take theirs so), within the route's bodyLimit.
 */
export async function readMultipart(req: MultipartRequest, options: MultipartOptions): Promise<FormFields> {
  const type = req.firstHeader("content-type");
  if (type === undefined || !/^multipart\/form-data\s*;/i.test(type)) {
    throw new HttpError(415, `Expected a multipart/form-data body, got ${type === undefined ? "no Content-Type" : `"${type}"`}`);
  }
  // The parts are read as they stream in, and a multipart body is not inflated on the way.
  const encoding = req.firstHeader("content-encoding");
  if (encoding !== undefined && !/^\s*identity\s*$/i.test(encoding)) {
    throw new HttpError(415, `A multipart/form-data body with Content-Encoding "${encoding}" can't be read: send it uncompressed`);
  }
  const Busboy = await (busboy ??= import("@fastify/busboy").then((m) => m.Busboy));
  const limits = { fileSize: Infinity, files: 10, fields: 100, parts: 110, fieldSize: 64 * 1024, ...options.limits };
  for (const [name, value] of Object.entries(limits)) {
    if (value !== Infinity && (!Number.isInteger(value) || value < 0))
      throw new RangeError(`req.multipart(): limits.${name} must be a whole number >= 0, got ${String(value)}`);
  }
  let parser: ReturnType<typeof Busboy>;
  try {
    parser = Busboy({ headers: { "content-type": type }, limits });
  } catch (err) {
    throw new HttpError(400, `Malformed multipart/form-data body: ${(err as Error).message}`, { cause: err });
  }
  const fields: FormFields = Object.create(null);
  const handled: Promise<unknown>[] = [];
  return new Promise<FormFields>((resolve, reject) => {
    let settled = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      // The rest of the body is not read: the connection closes after the answer.
      req.resume();
      reject(err);
    };
    const tooMany = (what: string, limit: number) => () =>
      fail(new HttpError(413, `The form has more than ${limit} ${what}; raise limits.${what === "parts" ? "parts" : what} to accept it`));
    parser.on("field", (name, value, _nameTruncated, valueTruncated) => {
      if (valueTruncated) return fail(new HttpError(413, `Form field "${name}" is larger than ${limits.fieldSize} bytes; raise limits.fieldSize to accept it`));
      const seen = fields[name];
      fields[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
    });
    parser.on("file", (field, stream, filename, _encoding, mimeType) => {
      if (options.onFile === undefined) {
        stream.resume();
        return fail(new HttpError(400, `Unexpected file in form field "${field}": this route takes no files`));
      }
      stream.on("limit", () => {
        const err = new HttpError(
          413,
          `File "${filename}" in form field "${field}" is larger than ${limits.fileSize} bytes; raise limits.fileSize to accept it`,
        );
        stream.destroy(err);
        fail(err);
      });
      try {
        handled.push(
          Promise.resolve(options.onFile({ field, filename, mimeType, stream })).catch((err: unknown) => {
            stream.resume();
            fail(err);
          }),
        );
      } catch (err) {
        stream.resume();
        fail(err);
      }
    });
    parser.on("partsLimit", tooMany("parts", limits.parts));
    parser.on("filesLimit", tooMany("files", limits.files));
    parser.on("fieldsLimit", tooMany("fields", limits.fields));
    parser.on("error", (err: unknown) => fail(new HttpError(400, `Malformed multipart/form-data body: ${(err as Error).message}`, { cause: err })));
    parser.on("finish", () => {
      void Promise.all(handled).then(() => {
        if (settled) return;
        settled = true;
        resolve(fields);
      });
    });
    // The request's own failure: past the route's bodyLimit (413), or the client went away.
    req.on("error", fail);
    req.pipe(parser);
  });
}
