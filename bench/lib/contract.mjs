// The route contract every contender implements, and the shared pieces of work
// (the HTML page) so that each app does exactly the same job.
import { ARENA_ROUTES } from "../arena/scenarios.mjs";
import { SERVING_ROUTES } from "../serving/scenarios.mjs";
import { INVALID_BODY, ORDER, VALID_BODY, summarize } from "./validation.mjs";

export const TOKEN = "my_token_12345";
/** The cookie header the seed's benchmark sends on every GET. */
export const SEED_COOKIE = "sessionId=abc123; otherCookie=value";
/** The Set-Cookie that clears the token: empty, expired (the epoch, or Max-Age=0 as some frameworks send). */
const CLEARED_TOKEN = /^token=;.*(Expires=Thu, 01 Jan 1970 00:00:00 GMT|Max-Age=0)/i;
export const DEEP_PATH = "/very/deeply/nested/route/hello/there/admin/dashboard/ping";

const ROWS = Array.from({ length: 8 }, (_, i) => `<li>Item ${i + 1}: a line of text that pads the page like real markup does</li>`).join("");

/**
 * HyperExpress's scenario: a small HTML page (about 1 KB) carrying a fresh
 * timestamp, so nothing can be cached between requests.
 */
export function htmlPage() {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Benchmark page</title></head><body><h1>Hello from the benchmark</h1><p>Rendered at ${Date.now()}</p><ul>${ROWS}</ul><footer>The end.</footer></body></html>`;
}

/**
 * The request every route of the contract is timed with, and what a correct answer looks like.
 * `note` tells apart, in reports and charts, two routes that share a method and path.
 */
export const ROUTES = [
  { id: "root", method: "GET", path: "/", headers: { cookie: SEED_COOKIE }, status: 200, type: /^text\/plain/, body: (name) => `Hello from ${name}!` },
  { id: "deep", method: "GET", path: DEEP_PATH, headers: { cookie: SEED_COOKIE }, status: 200, type: /^text\/plain/, body: () => "Pong!" },
  { id: "query", method: "GET", path: "/hello?name=John", headers: { cookie: SEED_COOKIE }, status: 200, type: /^text\/plain/, body: () => "Hello, John!" },
  // As in the seed: its cookie has no token, so /admin answers 403 on purpose.
  { id: "admin", method: "GET", path: "/admin", headers: { cookie: SEED_COOKIE }, status: 403, type: /^text\/plain/, body: () => "Unauthenticated" },
  // The other branch of /admin: the token cookie /admin/set-token gives, which the route clears
  // (an expired Set-Cookie) before answering JSON.
  {
    id: "admin-auth",
    method: "GET",
    path: "/admin",
    note: "(token)",
    headers: { cookie: `token=${TOKEN}` },
    status: 200,
    type: /^application\/json/,
    json: { message: "Secret info" },
    setCookie: CLEARED_TOKEN,
  },
  {
    id: "set-token",
    method: "GET",
    path: "/admin/set-token",
    headers: { cookie: SEED_COOKIE },
    status: 200,
    type: /^text\/plain/,
    body: () => "Token set!",
    setCookie: /^token=my_token_12345; Path=\//i,
  },
  {
    id: "parse-body",
    method: "POST",
    path: "/parse-body",
    headers: { "content-type": "application/json" },
    payload: JSON.stringify({ message: "Hello!" }),
    status: 200,
    type: /^application\/json/,
    json: { message: "Hello!" },
  },
  { id: "json", method: "GET", path: "/json", headers: {}, status: 200, type: /^application\/json/, json: { hello: "world" } },
  { id: "api", method: "GET", path: "/api?name=A&lastname=B", headers: {}, status: 200, type: /^text\/plain/, body: () => "Hey A B" },
  { id: "html", method: "GET", path: "/html", headers: {}, status: 200, type: /^text\/html/, body: () => /^<!DOCTYPE html>.*Rendered at \d{13}.*<\/html>$/s },
  // Only for contenders with `validation: true` (lib/contenders.mjs): the schema scenario.
  {
    id: "validate",
    needs: "validation",
    method: "POST",
    path: "/validate",
    headers: { "content-type": "application/json" },
    payload: VALID_BODY,
    status: 200,
    type: /^application\/json/,
    json: summarize(ORDER),
  },
];

/** Requests that are not timed but must be answered right. */
export const EXTRA_CHECKS = [
  { id: "hello-default", method: "GET", path: "/hello", headers: {}, status: 200, type: /^text\/plain/, body: () => "Hello, user!" },
  {
    id: "validate-invalid",
    needs: "validation",
    method: "POST",
    path: "/validate",
    headers: { "content-type": "application/json" },
    payload: INVALID_BODY,
    status: 400,
    type: /^application\/json/,
    body: () => /./,
  },
];

/** A route of the contract, or an arena or serving scenario's (one per scenario, named `arena-<scenario>`, `serving-<scenario>`). */
export function routeById(id) {
  const route = ROUTES.find((r) => r.id === id) ?? ARENA_ROUTES.find((r) => r.id === id) ?? SERVING_ROUTES.find((r) => r.id === id);
  if (!route) throw new Error(`Unknown route "${id}"; known: ${ROUTES.map((r) => r.id).join(", ")}`);
  return route;
}
