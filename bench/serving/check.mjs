// Before a serving contender is timed, it must answer its scenario's request right over the
// scenario's own protocol: HTTP/2 negotiated by ALPN over TLS (h2), cleartext HTTP/2 (h2c), HTTP/3
// (h3, asked by bench/h3-load's quic-go client), HTTPS with the run's certificate (tls) or HTTP/1.1
// (http).
import { execFile } from "node:child_process";
import { request as httpRequest } from "node:http";
import { connect } from "node:http2";
import { request as httpsRequest } from "node:https";
import { answerProblems } from "../lib/conformance.mjs";
import { goTool } from "../lib/go-tool.mjs";

const TIMEOUT_MS = 5000;

/** The problems with the answer `port` gives to `route` over `protocol`; none means it may be timed. `ca`: the run's certificate (PEM). */
export async function checkServing({ protocol, port, route, ca }) {
  const where = `GET ${route.path} over ${protocol}`;
  try {
    const answer = await (protocol === "h2" || protocol === "h2c"
      ? getHttp2(protocol, port, route.path, ca)
      : protocol === "h3"
        ? getHttp3(port, route.path)
        : getHttp1(protocol, port, route.path, ca));
    if (answer.problem) return [`${where}: ${answer.problem}`];
    return answerProblems(where, route, answer);
  } catch (err) {
    return [`${where}: ${err.message}`];
  }
}

function getHttp1(protocol, port, path, ca) {
  const request = protocol === "tls" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, ca, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode, type: res.headers["content-type"], length: res.headers["content-length"], text }));
    });
    req.setTimeout(TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    req.on("error", reject);
    req.end();
  });
}

/** One GET over HTTP/3 (`h3-load -once`; the certificate is not verified there). */
function getHttp3(port, path) {
  return new Promise((resolve, reject) => {
    execFile(goTool("h3-load"), ["-once", "-url", `https://127.0.0.1:${port}${path}`], { timeout: TIMEOUT_MS * 2 }, (err, stdout, stderr) => {
      if (err !== null) return reject(new Error(`h3-load -once failed: ${stderr.trim() || err.message}`));
      const [answer] = JSON.parse(stdout);
      if (answer.error) return resolve({ problem: `no answer over HTTP/3: ${answer.error}` });
      if (answer.proto !== "HTTP/3.0") return resolve({ problem: `answered over ${answer.proto}, not HTTP/3.0` });
      resolve({ status: answer.status, type: answer.headers["content-type"], length: answer.headers["content-length"], text: answer.body });
    });
  });
}

function getHttp2(protocol, port, path, ca) {
  return new Promise((resolve, reject) => {
    const session = connect(`${protocol === "h2" ? "https" : "http"}://127.0.0.1:${port}`, { ca });
    session.setTimeout(TIMEOUT_MS, () => {
      session.destroy();
      reject(new Error(`no answer within ${TIMEOUT_MS / 1000} s`));
    });
    session.on("error", reject);
    session.on("connect", () => {
      if (protocol === "h2" && session.alpnProtocol !== "h2") {
        session.destroy();
        return resolve({ problem: `ALPN negotiated ${JSON.stringify(session.alpnProtocol)}, not "h2"` });
      }
      const stream = session.request({ ":path": path });
      let headers;
      let text = "";
      stream.setEncoding("utf8");
      stream.on("response", (h) => (headers = h));
      stream.on("data", (chunk) => (text += chunk));
      stream.on("error", reject);
      stream.on("end", () => {
        session.close();
        resolve({ status: headers?.[":status"], type: headers?.["content-type"], length: headers?.["content-length"], text });
      });
    });
  });
}
