// Bun.serve with HTTP/3 (`http3: true`, beside HTTP/1.1 over TLS on the same port), answering
// baseline-h3's GET /baseline2?a=1&b=2: Bun's side of bench/h3-vs-h2.mjs. Run by Bun with PORT,
// KEY and CERT (PEM file paths) in its environment; prints "listening PORT" once it listens.
const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: "127.0.0.1",
  http3: true,
  tls: { key: Bun.file(process.env.KEY), cert: Bun.file(process.env.CERT) },
  fetch(req) {
    const url = new URL(req.url);
    if (url.pathname !== "/baseline2") return new Response("Not Found", { status: 404 });
    return new Response(String(Number(url.searchParams.get("a")) + Number(url.searchParams.get("b"))));
  },
});
console.log("listening " + server.port);
