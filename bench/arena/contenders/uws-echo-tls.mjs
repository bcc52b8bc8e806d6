// Bare uWebSockets.js over TLS (its SSLApp), hand-written: the ceiling for the echo profiles
// (echo-10k, echo-100k) on uWS.js, for bench/arena/echo-tls.mjs. The body read as it arrives
// and sent back whole with its Content-Length.
import { requireNativeUws } from "../../contenders/uws-native.mjs";

const uWS = requireNativeUws();
const PORT = Number(process.env.PORT);

uWS
  .SSLApp({ key_file_name: process.env.TLS_KEY, cert_file_name: process.env.TLS_CERT })
  .post("/echo", (res) => {
    const chunks = [];
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    res.onData((chunk, last) => {
      // A copy: uWS.js detaches the chunk once this callback returns.
      chunks.push(Buffer.from(chunk.slice(0)));
      if (last && !aborted) {
        const body = Buffer.concat(chunks);
        res.cork(() => res.writeHeader("content-type", "application/octet-stream").end(body));
      }
    });
  })
  .any("/*", (res) => {
    res.cork(() => res.writeStatus("404 Not Found").end("Not Found"));
  })
  .listen("127.0.0.1", PORT, (token) => {
    if (!token) {
      console.error(`uWS could not listen on ${PORT}`);
      process.exit(1);
    }
    console.log("ready");
  });
