// Bare Bun.serve, hand-written: the ceiling on Bun for the fixed-rate scenarios and idle (the
// baseline's GET and POST: the standing cost of a Bun server) and for held connections
// (/delay/:ms, bench/arena/held.mjs).
const TEXT = { "content-type": "text/plain; charset=utf-8" };
const text = (body, status = 200) => new Response(body, { status, headers: TEXT });

Bun.serve({
  port: Number(process.env.PORT),
  hostname: "127.0.0.1",
  // Held connections wait up to 10 s for their answer: no idle timeout cuts them first.
  idleTimeout: 0,
  async fetch(req) {
    const url = new URL(req.url);
    if (url.pathname === "/baseline11") {
      const sum = Number(url.searchParams.get("a")) + Number(url.searchParams.get("b"));
      if (req.method === "GET") return text(String(sum));
      if (req.method === "POST") return text(String(sum + Number(await req.text())));
    }
    if (url.pathname.startsWith("/delay/") && req.method === "GET") {
      const raw = url.pathname.slice(7);
      const ms = Number(raw);
      if (!/^\d+$/.test(raw) || ms > 10_000) return text("Bad Request", 400);
      await Bun.sleep(ms);
      return text(String(ms));
    }
    return text("Not Found", 404);
  },
});
console.log("ready");
