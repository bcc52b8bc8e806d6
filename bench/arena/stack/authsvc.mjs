// production-stack's auth sidecar, as HttpArena's profile specifies it (its shared authsvc, in
// Rust, re-expressed): the edge asks it about every /api/ call (nginx's auth_request), and it
//
//   1. reads `Authorization: Bearer <token>`,
//   2. splits the token into header.payload.signature,
//   3. computes HMAC-SHA256(secret, "header.payload") and compares it with the signature
//      (base64url), in constant time,
//   4. decodes the payload and takes its `sub` claim (a string or a number),
//   5. answers 200 with `X-User-Id: <sub>`, or 401.
//
// No cache: every call is verified. Like HttpArena's, it checks the signature and nothing else of
// the token (neither `alg` nor `exp`): that is the contract every entry is measured with.
// node:crypto's HMAC rather than a JWT library: the contract is a plain HS256 check, and
// createHmac costs about 2 µs of CPU a token here, where WebCrypto's HMAC (what jose runs on)
// costs about 11 µs and a trip to the thread pool.
//
//   [JWT_SECRET=…] PORT=9090 node bench/arena/stack/authsvc.mjs     prints "ready"; GET /_health answers 200
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** HttpArena's secret, shared by the token's signer and the sidecar (JWT_SECRET overrides it). */
export const JWT_SECRET = "httparena-bench-secret-do-not-use-in-production";

/** The claims of HttpArena's token (data/jwt-token.txt, which signToken(TOKEN_CLAIMS) reproduces): user 42. */
export const TOKEN_CLAIMS = { sub: "42", name: "Alice Chen", exp: 1807902621 };

const base64url = (value) => Buffer.from(value).toString("base64url");

/** An HS256 JWT of `claims`, as HttpArena's data/jwt-token.txt is made ({"sub":"42","name":…,"exp":…}). */
export function signToken(claims, secret = JWT_SECRET) {
  const signed = `${base64url(JSON.stringify({ alg: "HS256", typ: "JWT" }))}.${base64url(JSON.stringify(claims))}`;
  return `${signed}.${createHmac("sha256", secret).update(signed).digest("base64url")}`;
}

/** The user id an Authorization header vouches for (steps 1-4 above), or undefined. */
export function verifiedSubject(authorization, secret = JWT_SECRET) {
  if (typeof authorization !== "string" || !authorization.startsWith("Bearer ")) return undefined;
  const token = authorization.slice(7);
  const first = token.indexOf(".");
  const second = token.indexOf(".", first + 1);
  if (first === -1 || second === -1) return undefined;
  const expected = createHmac("sha256", secret).update(token.slice(0, second)).digest();
  const given = Buffer.from(token.slice(second + 1), "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  let sub;
  try {
    ({ sub } = JSON.parse(Buffer.from(token.slice(first + 1, second), "base64url").toString("utf8")));
  } catch {
    return undefined;
  }
  return typeof sub === "string" || typeof sub === "number" ? String(sub) : undefined;
}

/** Serves GET /_auth and GET /_health on 127.0.0.1:`port`; resolves the listening server. */
export function serveAuth(port, secret = JWT_SECRET) {
  const server = createServer((req, res) => {
    if (req.url === "/_health") return void res.end();
    if (req.url !== "/_auth") {
      res.statusCode = 404;
      return void res.end();
    }
    const sub = verifiedSubject(req.headers.authorization, secret);
    // A subject that can't be a header value is refused (the Rust sidecar answers 200 without X-User-Id).
    if (sub === undefined || !/^[\x20-\x7e]*$/.test(sub)) {
      res.statusCode = 401;
      return void res.end();
    }
    res.setHeader("X-User-Id", sub);
    res.end();
  });
  server.keepAliveTimeout = 300_000;
  return new Promise((done) => server.listen(port, "127.0.0.1", () => done(server)));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const server = await serveAuth(Number(process.env.PORT ?? 9090), process.env.JWT_SECRET ?? JWT_SECRET);
  console.log("ready");
  process.on("SIGTERM", () => server.close(() => process.exit(0)));
}
