import { setImmediate } from "../../base/loop.js";

/**
 * Resolves once the event loop has polled for I/O and served what it read: what clients sent
 * before now has been read and handed to the app. A drain awaits it before it closes idle
 * connections or counts the requests in flight (both engines): closing over bytes a client sent
 * resets the connection, and its request is lost unanswered.
 *
 * libuv reads every ready socket in its poll phase; node:http parses and dispatches there, and
 * the native engine in the check phase that follows, in a check handle started after Node's
 * own, which libuv runs first. An immediate queued from the check phase runs in the next turn's,
 * after that turn's poll: two in a row cover a call from any phase.
 */
export function afterPendingReads(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}
