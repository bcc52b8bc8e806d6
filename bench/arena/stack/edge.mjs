// production-stack's edge: Debian's nginx, configured as HttpArena's reference entry configures it
// (frameworks/aspnet-minimal_nginx/proxy-production/nginx.conf): HTTP/2 over TLS; /static/ from
// disk (gzip_static); /public/ passed to the app; /api/ passed to the app only once the auth
// sidecar has verified the call's JWT (auth_request, on every call, no cache), with the subject in
// X-User-Id (a client's own X-User-Id is replaced); 401 otherwise. One process (master_process
// off), so it can be pinned and sampled; its configuration and temporary files go to a directory
// of its own, removed when it stops.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pin } from "../../lib/proc.mjs";

export function hasNginx() {
  try {
    execFileSync("nginx", ["-v"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** nginx.conf for the edge on `port`, in front of the app on `appPort` and the sidecar on `authPort`. */
export function edgeConfig({ dir, port, appPort, authPort, staticDir, cert, key }) {
  const proxied = `proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;`;
  return `daemon off;
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log stderr warn;
events { worker_connections 8192; }
http {
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  access_log off;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  gzip_static on;
  gzip_vary on;
  keepalive_timeout 65;
  keepalive_requests 100000;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream app {
    server 127.0.0.1:${appPort};
    keepalive 256;
    keepalive_requests 100000;
    keepalive_timeout 300s;
  }
  upstream authsvc {
    server 127.0.0.1:${authPort};
    keepalive 64;
    keepalive_requests 100000;
    keepalive_timeout 300s;
  }
  server {
    listen 127.0.0.1:${port} ssl http2;
    ssl_certificate ${cert};
    ssl_certificate_key ${key};
    ssl_protocols TLSv1.2 TLSv1.3;
    auth_request_set $auth_user_id $upstream_http_x_user_id;
    # The check of every /api/ call: the Authorization header alone goes to the sidecar.
    location = /_auth {
      internal;
      proxy_pass http://authsvc/_auth;
      ${proxied}
      proxy_set_header Authorization $http_authorization;
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
    }
    location /static/ {
      alias ${staticDir}/;
      expires off;
      add_header Cache-Control "no-cache";
    }
    location /public/ {
      proxy_pass http://app;
      ${proxied}
    }
    location /api/ {
      auth_request /_auth;
      error_page 401 = @unauthorized;
      proxy_pass http://app;
      ${proxied}
      proxy_set_header X-User-Id $auth_user_id;
    }
    location @unauthorized {
      default_type application/json;
      return 401 '{"error":"unauthorized"}';
    }
  }
}
`;
}

/**
 * Starts nginx with that configuration (checked first with `nginx -t`, whose message is the error
 * when it fails) on the given core; resolves { port, pid, stop() } once the port accepts connections.
 */
export async function startEdge({ port, appPort, authPort, staticDir, cert, key, cpu = null }) {
  const dir = mkdtempSync(join(tmpdir(), "cog-arena-edge-"));
  const conf = join(dir, "nginx.conf");
  writeFileSync(conf, edgeConfig({ dir, port, appPort, authPort, staticDir, cert, key }));
  try {
    execFileSync("nginx", ["-t", "-q", "-e", "stderr", "-p", dir, "-c", conf], { stdio: ["ignore", "ignore", "pipe"] });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`nginx refused the edge's configuration: ${String(err.stderr ?? err.message).trim()}`);
  }
  const child = spawn(...pin(cpu, "nginx", ["-e", "stderr", "-p", dir, "-c", conf]), { stdio: ["ignore", "ignore", "pipe"] });
  let output = "";
  child.stderr.on("data", (d) => (output += d));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      // QUIT: nginx finishes the requests it has, then exits.
      child.kill("SIGQUIT");
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", () => child.kill("SIGKILL"));
  for (const deadline = Date.now() + 10_000; ;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`nginx exited (${child.exitCode}) during start-up: ${output.trim()}`);
    }
    if (await accepts(port)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`nginx did not listen on ${port} within 10 s: ${output.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.stderr.resume();
  return { port, pid: child.pid, stop };
}

function accepts(port) {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}
