import { promises as fs } from "node:fs";

/**
 * `fs.promises.open` as Node made it, taken when Cog loads: files are opened by the engine
 * itself only while it is still that one (see `engineFiles` in server.ts).
 */
export const NODE_OPEN = fs.open;
