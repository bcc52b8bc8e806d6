// The file server (server.ts), loaded on first use by `serveStatic` and `res.sendFile`.
// `fs.promises.open` is taken as Node made it as Cog loads (node-open.ts), before an app or a
// test may replace it.
import "./node-open.js";

type Files = typeof import("./server.js");
let files: Promise<Files> | undefined;
/** The file-serving code, loaded on first use: an app that serves no file never loads it. */
export function loadFiles(): Promise<Files> {
  return (files ??= import("./server.js"));
}
