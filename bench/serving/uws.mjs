// Bare uWebSockets.js, hand-written: the ceiling Cog's native engine is compared with. HTTPS
// through its SSLApp; uWS.js has no HTTP/2. Workers listen with SO_REUSEPORT (uWS's default).
import { requireNativeUws } from "../contenders/uws-native.mjs";
import { HOST, PORT, PROTO, serve } from "./processes.mjs";
import { HELLO, HELLO_JSON } from "./scenarios.mjs";

const uWS = requireNativeUws();

await serve(() => {
  const app = PROTO === "tls" ? uWS.SSLApp({ key_file_name: process.env.TLS_KEY, cert_file_name: process.env.TLS_CERT }) : uWS.App();
  app.get("/", (res) => res.cork(() => res.writeHeader("content-type", "text/plain; charset=utf-8").end(HELLO)));
  app.get("/json", (res) => res.cork(() => res.writeHeader("content-type", "application/json; charset=utf-8").end(HELLO_JSON)));
  return new Promise((resolve, reject) =>
    app.listen(HOST, PORT, (socket) => (socket ? resolve() : reject(new Error(`uWS could not listen on ${HOST}:${PORT}`)))),
  );
});
