// Charts like mion's (requests/s, latency, throughput, max memory, memory over
// time), drawn by Vega-Lite and rendered to SVG in Node without a browser.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as vega from "vega";
import * as vegaLite from "vega-lite";
import { routeById } from "./contract.mjs";
import { summarize } from "./report.mjs";

const COG = "#d9480f";
const OTHERS = "#868e96";
const BARE = "#495057";

function routeName(id) {
  const r = routeById(id);
  const path = r.path.length > 24 ? `${r.path.slice(0, 21)}…` : r.path;
  return `${r.method} ${path}${r.note === undefined ? "" : ` ${r.note}`}`;
}

function barChart(rows, field, title, axisTitle, contenders) {
  const values = rows.filter((r) => r[field] !== null).map((r) => ({ route: routeName(r.route), contender: r.contender, value: r[field] }));
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title,
    data: { values },
    width: 110,
    height: { step: 14 },
    facet: { column: { field: "route", type: "nominal", title: null, header: { labelFontSize: 11 } } },
    spec: {
      width: 150,
      height: { step: 14 },
      mark: { type: "bar", tooltip: true },
      encoding: {
        y: { field: "contender", type: "nominal", sort: contenders, title: null },
        x: { field: "value", type: "quantitative", title: axisTitle },
        color: {
          condition: [
            { test: "datum.contender === 'cog'", value: COG },
            { test: "datum.contender === 'node-http' || datum.contender === 'uws' || datum.contender === 'bun'", value: BARE },
          ],
          value: OTHERS,
        },
      },
    },
    config: { font: "sans-serif", view: { stroke: null } },
  };
}

function memorySeries(results, contenders) {
  // The last measured round of the first route of the last scenario (the heaviest load by default).
  const last = results.scenarios[results.scenarios.length - 1];
  const route = last.routes[0];
  const values = [];
  for (const name of contenders) {
    const rounds = results.measurements.filter((m) => m.scenario === last.id && m.route === route && m.contender === name && !m.failed);
    const pick = rounds[rounds.length - 1];
    for (const point of pick?.rssSeries ?? []) values.push({ contender: name, t: point.t, rss: point.rss / 2 ** 20 });
  }
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: `Server memory during ${routeName(route)} (MiB RSS)`,
    data: { values },
    width: 560,
    height: 260,
    mark: { type: "line", interpolate: "monotone" },
    encoding: {
      x: { field: "t", type: "quantitative", title: "seconds into the measurement" },
      y: { field: "rss", type: "quantitative", title: "RSS (MiB)" },
      color: { field: "contender", type: "nominal", sort: contenders },
      strokeWidth: { condition: { test: "datum.contender === 'cog'", value: 3 }, value: 1.5 },
    },
    config: { font: "sans-serif" },
  };
}

export async function renderSvg(spec) {
  const compiled = vegaLite.compile(spec).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: "none" });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}

/** Writes the charts and returns their paths. */
export async function writeCharts(results, dir) {
  const rows = summarize(results);
  if (rows.length === 0) return [];
  mkdirSync(dir, { recursive: true });
  const contenders = results.contenders.map((c) => c.name);
  const specs = {
    "requests.svg": barChart(rows, "rps", "Requests per second (median)", "req/s", contenders),
    "latency.svg": barChart(rows, "latencyAvg", "Average latency (ms, median)", "ms", contenders),
    "throughput.svg": barChart(
      rows.map((r) => ({ ...r, mib: r.bytesPerSec === null ? null : r.bytesPerSec / 2 ** 20 })),
      "mib",
      "Throughput (MiB/s, median)",
      "MiB/s",
      contenders,
    ),
    "max-memory.svg": barChart(
      rows.map((r) => ({ ...r, mem: r.peakRss ? r.peakRss / 2 ** 20 : null })),
      "mem",
      "Peak server memory (MiB RSS)",
      "MiB",
      contenders,
    ),
    "memory-series.svg": memorySeries(results, contenders),
  };
  const files = [];
  for (const [name, spec] of Object.entries(specs)) {
    const file = join(dir, name);
    writeFileSync(file, await renderSvg(spec));
    files.push(file);
  }
  return files;
}
