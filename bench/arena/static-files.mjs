// The static scenario's 20 files, named and sized as HttpArena's (about 840 KB:
// 743 KB of text, 99 KB of fonts and images), generated from a fixed seed into
// .cache/arena-static/ with .br (quality 11) and .gz (level 9) beside each text
// file, as its data set has them. Text is built from a CSS/JS/HTML vocabulary so
// it compresses about as real assets do; fonts and images are incompressible.
//
//   node bench/arena/static-files.mjs     (re)generates them and prints the directory
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

const KB = 1024;
export const STATIC_FILES = [
  { name: "reset.css", size: 8 * KB },
  { name: "layout.css", size: 20 * KB },
  { name: "theme.css", size: 30 * KB },
  { name: "components.css", size: 120 * KB },
  { name: "utilities.css", size: 50 * KB },
  { name: "analytics.js", size: 12 * KB },
  { name: "helpers.js", size: 24 * KB },
  { name: "app.js", size: 90 * KB },
  { name: "vendor.js", size: 300 * KB },
  { name: "router.js", size: 30 * KB },
  { name: "header.html", size: 8 * KB },
  { name: "footer.html", size: 6 * KB },
  { name: "regular.woff2", size: 24 * KB, binary: "wOF2" },
  { name: "bold.woff2", size: 24 * KB, binary: "wOF2" },
  { name: "logo.svg", size: 4 * KB },
  { name: "icon-sprite.svg", size: 38 * KB },
  { name: "hero.webp", size: 35 * KB, binary: "RIFF" },
  { name: "thumb1.webp", size: 8 * KB, binary: "RIFF" },
  { name: "thumb2.webp", size: 8 * KB, binary: "RIFF" },
  { name: "manifest.json", size: 3 * KB },
];

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const VERSION = "2";

/** The directory holding the files (the /static/ root), generated on first use. */
export function staticDir() {
  const dir = join(root, ".cache", "arena-static");
  const stamp = join(dir, ".version");
  if (!existsSync(stamp) || readFileSync(stamp, "utf8") !== VERSION) generate(dir);
  return dir;
}

function generate(dir) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  let seed = 20260101;
  const random = () => {
    // xorshift32: the same files on every machine.
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  const pick = (list) => list[Math.floor(random() * list.length)];
  const words = [
    "container",
    "header",
    "button",
    "primary",
    "card",
    "grid",
    "nav",
    "item",
    "active",
    "modal",
    "footer",
    "title",
    "content",
    "wrapper",
    "icon",
    "list",
    "form",
    "input",
    "label",
    "badge",
    "panel",
    "menu",
    "link",
    "hero",
    "thumb",
  ];
  const ident = () => `${pick(words)}${random() < 0.5 ? `-${pick(words)}` : ""}${random() < 0.3 ? `-${Math.floor(random() * 100)}` : ""}`;
  const text = {
    css: () =>
      `.${ident()} { ${pick(["margin", "padding", "color", "display", "width", "border", "font-size", "gap"])}: ${pick(["0", "1rem", "auto", "flex", "#1a2b3c", "100%", "1px solid #ddd", "0.875rem"])}; ${pick(["line-height", "opacity", "z-index", "top"])}: ${Math.floor(random() * 100)}; }\n`,
    js: () =>
      `export function ${ident().replace(/-/g, "_")}(${pick(["el", "state", "event", "options"])}) { const ${pick(words)} = ${pick(["document.querySelector", "state.get", "Object.assign", "JSON.parse"])}(${JSON.stringify(ident())}); return ${pick(words)} ${pick(["?? null", "&& true", "|| []"])}; }\n`,
    html: () => `<div class="${ident()}"><a href="/${pick(words)}/${Math.floor(random() * 1000)}">${pick(words)} ${pick(words)}</a></div>\n`,
    svg: () =>
      `<path d="M${Math.floor(random() * 512)} ${Math.floor(random() * 512)}L${Math.floor(random() * 512)} ${Math.floor(random() * 512)}Z" fill="#${Math.floor(
        random() * 0xffffff,
      )
        .toString(16)
        .padStart(6, "0")}"/>\n`,
    json: () =>
      `{"src":"/static/${pick(words)}-${Math.floor(random() * 512)}.webp","sizes":"${Math.floor(random() * 512)}x${Math.floor(random() * 512)}","type":"image/webp"},\n`,
  };
  for (const { name, size, binary } of STATIC_FILES) {
    const ext = name.slice(name.lastIndexOf(".") + 1);
    let body;
    if (binary) {
      body = Buffer.alloc(size);
      for (let i = 0; i < size; i++) body[i] = Math.floor(random() * 256);
      body.write(binary === "RIFF" ? "RIFF" : "wOF2", 0, "latin1");
      if (binary === "RIFF") body.write("WEBP", 8, "latin1");
    } else {
      const [open, close] = {
        html: ["<!-- fragment -->\n", ""],
        svg: ['<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512">\n', "</svg>\n"],
        json: ['{"name":"Arena","icons":[\n', '{"src":"/static/logo.svg"}]}\n'],
      }[ext] ?? ["", ""];
      // Whole lines up to the size, padded with blanks, so every file stays valid of its kind.
      let out = open;
      for (let line = text[ext](); out.length + line.length + close.length < size; line = text[ext]()) out += line;
      body = Buffer.from(out.padEnd(size - close.length, " ") + close);
      writeFileSync(
        join(dir, `${name}.br`),
        brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
      );
      writeFileSync(join(dir, `${name}.gz`), gzipSync(body, { level: 9 }));
    }
    writeFileSync(join(dir, name), body);
  }
  writeFileSync(join(dir, ".version"), VERSION);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  rmSync(join(root, ".cache", "arena-static", ".version"), { force: true });
  console.log(staticDir());
}
