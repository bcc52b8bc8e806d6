// ultimate-express (the Express API on uWebSockets.js): HTTPS through uWS's SSLApp (its
// uwsOptions' key_file_name / cert_file_name); uWS.js has no HTTP/2. In node:cluster workers it
// listens with SO_REUSEPORT.
import { requireNativeUws } from "../contenders/uws-native.mjs";
import { HOST, PORT, PROTO, serve } from "./processes.mjs";
import { HELLO } from "./scenarios.mjs";

requireNativeUws();
const { default: express } = await import("ultimate-express");

await serve(() => {
  const uwsOptions = PROTO === "tls" ? { key_file_name: process.env.TLS_KEY, cert_file_name: process.env.TLS_CERT } : {};
  const app = express({ uwsOptions });
  app.disable("etag");
  app.get("/", (_req, res) => res.type("text/plain").send(HELLO));
  app.get("/json", (_req, res) => res.json({ message: HELLO }));
  return new Promise((resolve) => app.listen(PORT, HOST, resolve));
});
