/**
 * The event loop's scheduling functions, for Cog's internals, as Node's own modules hold theirs:
 * the timers from node:timers, and `nextTick`, `queueMicrotask` and the clock (`now`, in ms) as
 * they were when Cog loaded, never looked up on the global object at each call. A test's fake
 * timers (Jest's `jest.useFakeTimers()`, Sinon's) replace the globals later: they then pace the
 * test's own code and not the engine's writes, the router's `next()` or the server's events, just
 * as they don't pace node:http's. Were these the globals, a request served while a test fakes
 * timers would wait for the test to advance its clock, and hang (express-rate-limit's suite, under
 * Jest).
 */
export { clearImmediate, clearInterval, clearTimeout, setImmediate, setInterval, setTimeout } from "node:timers";

export const nextTick: typeof process.nextTick = process.nextTick;
export const queueMicrotask: typeof globalThis.queueMicrotask = globalThis.queueMicrotask;
export const now: () => number = performance.now.bind(performance);
