/**
 * Makes one of the native engine's classes Node's kind, so that `req instanceof
 * http.IncomingMessage` and `res instanceof http.ServerResponse` are true on it as on node:http
 * (helmet, express-http-proxy and others test it): Node's prototype goes into the class's chain,
 * once, at load, between Cog's lowest prototype and the stream class it stood on (Node's
 * prototypes stand on that class too). No object is changed per request, and no constructor of
 * Node's runs.
 *
 * Node's members work on Node's private fields, which these objects lack. Every member of Node's
 * prototypes that Cog's classes don't define is hidden under an own `undefined` on Cog's lowest
 * prototype (writable, as middleware assigns some: `res._headers`), as it was before Node's
 * prototype was there: middleware that feature-detects one (`typeof res.writeEarlyHints`) finds
 * none and goes on. Only `inherit`'s, which work through the public members Cog defines, are
 * Node's own. Members a later Node adds are hidden the same way, being listed at load.
 */
export function underNodeClass(top: object, base: object, node: object, inherit: ReadonlySet<PropertyKey>): void {
  const stood = Object.getPrototypeOf(base) as object;
  const ours = new Set<PropertyKey>();
  for (let p: object = top; p !== stood; p = Object.getPrototypeOf(p) as object) for (const key of Reflect.ownKeys(p)) ours.add(key);
  const hidden = new Set<PropertyKey>();
  for (let p: object | null = node; p !== stood; p = Object.getPrototypeOf(p) as object | null) {
    if (p === null) throw new Error(`Node's ${(node as { constructor: { name: string } }).constructor.name} no longer stands on ${(stood as { constructor: { name: string } }).constructor.name}: the native engine's classes can't be put over it`);
    for (const key of Reflect.ownKeys(p)) if (!ours.has(key) && !inherit.has(key)) hidden.add(key);
  }
  for (const key of hidden) Object.defineProperty(base, key, { value: undefined, writable: true, configurable: true });
  Object.setPrototypeOf(base, node);
}
