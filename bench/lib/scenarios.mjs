// The four seed experiments, each with the load settings its report used.
export const SCENARIOS = [
  {
    id: "seed",
    title: "Cog's six routes",
    source: "Cog vs Hono vs Express (seed 000): autocannon -c 800 -d 10, one route at a time",
    routes: ["root", "deep", "query", "admin", "set-token", "parse-body"],
    connections: 800,
    pipelining: 1,
    seedDuration: 10,
  },
  {
    id: "hello",
    title: "mion's hello world (JSON)",
    source: "mion http benchmarks (seed 001): autocannon -c 100 -d 40.32 -p 10",
    routes: ["json"],
    connections: 100,
    pipelining: 10,
    seedDuration: 40,
  },
  {
    id: "html",
    title: "HyperExpress's HTML page",
    source: "HyperExpress benchmarks (seed 002): autocannon -c 2500 -d 30 -p 4",
    routes: ["html"],
    connections: 2500,
    pipelining: 4,
    seedDuration: 30,
  },
  {
    id: "api",
    title: "Express vs http: /api",
    source: "Express vs http (seed 003): ab -n 10000 -c 100",
    routes: ["api"],
    connections: 100,
    pipelining: 1,
    seedDuration: 10,
  },
];
