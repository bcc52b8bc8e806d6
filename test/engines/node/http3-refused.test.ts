// listen({ http3: true }) is refused at startup, saying what to do, wherever it can't be served:
// on the node engine (Node has no QUIC: the native engine serves HTTP/3), without the app's tls
// option, on a Unix domain socket or with workers, and with a value that is not a boolean.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Cog } from "../../../src/index.js";
import { makeCertificates, opensslSkip } from "../../certificates.js";

const certs = opensslSkip === false ? makeCertificates() : null;

test("the node engine refuses http3: true, naming the native engine", { skip: opensslSkip }, async () => {
  const app = new Cog({ engine: "node", tls: certs!.issue("localhost") });
  await assert.rejects(app.listen({ port: 0, host: "127.0.0.1", http3: true }), /HTTP\/3 is served by the native engine only.*engine: "native"/);
  // Nothing listens after the refusal: the app may listen again without it.
  const address = (await app.listen({ port: 0, host: "127.0.0.1" })) as { port: number };
  assert.ok(address.port > 0);
  await app.close();
});

test("http3 without tls, on a path, with workers or not a boolean is refused before anything listens", async () => {
  const plain = new Cog({ engine: "node" });
  await assert.rejects(plain.listen({ port: 0, http3: true }), /needs the app's tls option/);
  await assert.rejects(plain.listen({ path: "/tmp/cog-h3.sock", http3: true }), /takes a port, not a path/);
  await assert.rejects(plain.listen({ port: 0, workers: 2, http3: true }), /no workers/);
  await assert.rejects(plain.listen({ port: 0, http3: "yes" as never }), /takes true or false/);
});
