// Before anything is timed, every contender must answer every route of the
// contract correctly, over a real socket, including pipelined requests.
import { connect } from "node:net";
import { EXTRA_CHECKS, ROUTES } from "./contract.mjs";

/**
 * Returns the list of problems; an empty list means the contender conforms.
 * `capabilities` names the optional parts of the contract it implements (e.g. "validation").
 */
export async function checkConformance(name, port, capabilities = []) {
  const problems = [];
  for (const route of [...ROUTES, ...EXTRA_CHECKS]) {
    if (route.needs !== undefined && !capabilities.includes(route.needs)) continue;
    try {
      const res = await fetch(`http://127.0.0.1:${port}${route.path}`, { method: route.method, headers: route.headers, body: route.payload });
      const text = await res.text();
      const where = `${route.method} ${route.path} (${route.id})`;
      if (res.headers.get("x-powered-by") !== name)
        problems.push(`${where}: X-Powered-By is ${JSON.stringify(res.headers.get("x-powered-by"))}, expected "${name}"`);
      problems.push(
        ...answerProblems(where, route, { status: res.status, type: res.headers.get("content-type"), length: res.headers.get("content-length"), text }, name),
      );
      if (route.setCookie !== undefined) {
        const cookies = res.headers.getSetCookie();
        if (!cookies.some((c) => route.setCookie.test(c))) problems.push(`${where}: Set-Cookie ${JSON.stringify(cookies)} does not match ${route.setCookie}`);
      }
    } catch (err) {
      problems.push(`${route.method} ${route.path}: ${err.message}`);
    }
  }
  const pipelined = await pipelinedStatuses(port, ["/json", "/hello?name=P", "/json", "/api?name=A&lastname=B"]);
  if (pipelined.join() !== "200,200,200,200") problems.push(`4 pipelined GETs: got statuses [${pipelined}], expected four 200s in order`);
  return problems;
}

/**
 * What is wrong with one answer to a route of the contract (status, Content-Type, body, and
 * Content-Length when sent), each problem prefixed with `where`; `name` is the contender's, for
 * the routes whose body names it.
 */
export function answerProblems(where, route, { status, type, length, text }, name) {
  const problems = [];
  if (status !== route.status) problems.push(`${where}: status ${status}, expected ${route.status}`);
  if (!route.type.test(type ?? "")) problems.push(`${where}: Content-Type "${type ?? ""}" does not match ${route.type}`);
  if (route.json !== undefined) {
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = Symbol("not JSON");
    }
    if (JSON.stringify(parsed) !== JSON.stringify(route.json)) problems.push(`${where}: body ${text.slice(0, 80)}, expected ${JSON.stringify(route.json)}`);
  } else {
    const expected = route.body(name);
    const ok = expected instanceof RegExp ? expected.test(text) : text === expected;
    if (!ok) problems.push(`${where}: body ${JSON.stringify(text.slice(0, 80))}, expected ${expected instanceof RegExp ? expected : JSON.stringify(expected)}`);
  }
  if (length != null && Number(length) !== Buffer.byteLength(text)) problems.push(`${where}: Content-Length ${length} but ${Buffer.byteLength(text)} bytes`);
  return problems;
}

function pipelinedStatuses(port, paths) {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    const finish = () => {
      socket.destroy();
      resolve([...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1])));
    };
    const timer = setTimeout(finish, 2000);
    socket.on("data", (d) => {
      text += d.toString("latin1");
      if ((text.match(/HTTP\/1\.1 /g) ?? []).length >= paths.length && /\r\n\r\n[^]*$/.test(text)) {
        clearTimeout(timer);
        setTimeout(finish, 50);
      }
    });
    socket.on("error", finish);
    socket.write(paths.map((p) => `GET ${p} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`).join(""));
  });
}
