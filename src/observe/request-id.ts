import { randomBytes } from "node:crypto";

/**
 * Request ids: a prefix random to this process, then a counter (`k3f9q2ab-1`, `k3f9q2ab-2`…).
 * Unique across the processes of a deployment (the prefix) and cheap to make: a string
 * concatenation, where `crypto.randomUUID()` costs several times as much per request (see
 * docs/decisions/request-log.md). Not secret, and not meant to be: an id names a request in logs.
 */
const PREFIX = randomBytes(6).toString("base64url");
let counter = 0;

/** A new id, unique in this process and, by its prefix, across processes. */
export function nextRequestId(): string {
  return `${PREFIX}-${++counter}`;
}

/**
 * An id a client or proxy sent, kept only when it is safe to echo and to log: 1 to 128
 * characters of letters, digits and `-_.:@/+=`. Anything else is dropped (a fresh one is made).
 */
const SAFE_ID = /^[A-Za-z0-9\-_.:@/+=]{1,128}$/;
export function acceptedRequestId(sent: string | undefined): string | undefined {
  return sent !== undefined && SAFE_ID.test(sent) ? sent : undefined;
}
