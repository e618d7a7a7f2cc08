#!/usr/bin/env node
// Bundles bridge_js/src into two classic scripts without any dependency:
//   dist/kanban.js  -> window.steamHarnessKanban (the plugin SDK)
//   dist/host.js    -> window.KanbanHost (the board page relay)
// Each bundle is the modules its entry needs in dependency order, import/export syntax
// stripped, top-level declarations nobody references dropped, comments and indentation
// removed, all inside one IIFE; then minify.mjs shortens the names the bundle binds and
// drops the line breaks and commas no statement needs. Sources follow two conventions
// this relies on: top-level declarations start at column 0, and comments sit on their
// own lines (minify.mjs refuses what it cannot read safely: see there).
//   node bridge_js/build.mjs          write dist/
//   node bridge_js/build.mjs --check  exit 1 if dist/ differs from what would be written
//   --out DIR                         use DIR instead of dist/ (tests)

import { readFileSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { compact, namesUsed, rename } from "./minify.mjs";

const ROOT = dirname(fileURLToPath(import.meta.url));
const SRC = join(ROOT, "src");
const DIST = join(ROOT, "dist");

const BUNDLES = {
  "kanban.js": {
    entry: "sdk.js",
    footer: "window.steamHarnessKanban ||= createKanban(window);",
  },
  "host.js": {
    entry: "host.js",
    footer: "window.KanbanHost = createHost(window);",
  },
};
const COPIES = { "kanban.d.ts": join(ROOT, "types", "kanban.d.ts") };

const IMPORT = /^import\s[^;]*?from\s*"\.\/([\w.-]+)";\s*$/gm;
const DECLARATION = /^(?:export\s+)?(?:async\s+)?(?:function\*?|class|const|let|var)\s+([\w$]+)/;

function modulesFor(entry) {
  const order = [];
  const visit = (name, trail) => {
    if (trail.includes(name)) throw new Error("import cycle: " + [...trail, name].join(" -> "));
    if (order.includes(name)) return;
    const text = readFileSync(join(SRC, name), "utf8");
    for (const [, dep] of text.matchAll(IMPORT)) visit(dep, [...trail, name]);
    order.push(name);
  };
  visit(entry, []);
  return order;
}

function stripModuleSyntax(name, text) {
  const body = text.replace(IMPORT, "");
  if (/^\s*(import|export\s+(default|\{|\*))/m.test(body)) {
    throw new Error(name + ": only `import {..} from \"./x.js\"` and `export <declaration>` are supported");
  }
  return body.replace(/^export\s+/gm, "");
}

function stripComments(text) {
  const out = [];
  let inBlock = false;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (inBlock) {
      inBlock = !line.includes("*/");
      continue;
    }
    if (line.startsWith("/*")) {
      inBlock = !line.includes("*/");
      continue;
    }
    if (line && !line.startsWith("//")) out.push(raw);
  }
  return out.join("\n");
}

// Splits at column-0 declarations and drops those no other kept code uses as a name (a
// property or an object key of the same spelling is no use).
export function treeShake(text, footer) {
  const chunks = [];
  for (const line of text.split("\n")) {
    const m = DECLARATION.exec(line);
    if (m || !chunks.length) chunks.push({ name: m ? m[1] : null, lines: [] });
    chunks[chunks.length - 1].lines.push(line);
  }
  for (const c of chunks) c.text = c.lines.join("\n");
  const seen = new Set();
  for (const c of chunks) {
    if (!c.name) continue;
    if (seen.has(c.name)) throw new Error("two modules declare " + c.name);
    seen.add(c.name);
  }
  for (const c of chunks) c.uses = namesUsed(c.text);
  const footerUses = namesUsed(footer);
  let kept = chunks;
  for (;;) {
    const next = kept.filter(
      (c) => !c.name || footerUses.has(c.name) || kept.some((o) => o !== c && o.uses.has(c.name)),
    );
    if (next.length === kept.length) return kept.map((c) => c.text).join("\n");
    kept = next;
  }
}

// Drops the spaces inside one line that no token needs. Lines stay lines, so automatic
// semicolon insertion sees the same code. Knows strings and regex literals; refuses
// template literals rather than tokenising them.
const WORD = /[\w$]/;
const REGEX_AFTER = /(^|[(,=:[!&|?{};+\-*%<>~^]|\b(return|typeof|case|in|of|delete|void|throw|new))\s*$/;

export function squeeze(line) {
  let out = "";
  let i = 0;
  while (i < line.length) {
    const c = line[i];
    if (c === "`") throw new Error("template literals are not supported by the build: " + line);
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (line[j] !== c) {
        if (j >= line.length) throw new Error("unterminated string: " + line);
        j += line[j] === "\\" ? 2 : 1;
      }
      out += line.slice(i, j + 1);
      i = j + 1;
    } else if (c === "/" && REGEX_AFTER.test(out)) {
      let j = i + 1;
      let inClass = false;
      while (inClass || line[j] !== "/") {
        if (j >= line.length) throw new Error("unterminated regex: " + line);
        if (line[j] === "[") inClass = true;
        else if (line[j] === "]") inClass = false;
        j += line[j] === "\\" ? 2 : 1;
      }
      j++;
      while (j < line.length && /[a-z]/.test(line[j])) j++;
      out += line.slice(i, j);
      i = j;
    } else if (c === " ") {
      const prev = out[out.length - 1] || "";
      while (line[i] === " ") i++;
      const next = line[i] || "";
      const same = (prev === "+" || prev === "-") && prev === next;
      if ((WORD.test(prev) && WORD.test(next)) || same) out += " ";
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

// `rename: false` leaves the names as written (tests read the bundle's structure that way).
export function build({ rename: shorten = true } = {}) {
  const out = {};
  for (const [file, { entry, footer }] of Object.entries(BUNDLES)) {
    const modules = modulesFor(entry);
    const source = modules
      .map((m) => stripComments(stripModuleSyntax(m, readFileSync(join(SRC, m), "utf8"))))
      .join("\n");
    const body = treeShake(source, footer)
      .split("\n")
      .map((l) => squeeze(l.trim()))
      .filter(Boolean)
      .join("\n");
    const code = "(function(){\n\"use strict\";\n" + body + "\n" + squeeze(footer) + "\n})();\n";
    out[file] =
      "/* built from bridge_js/src; do not edit */\n" +
      (shorten ? compact(rename(code)) : code);
  }
  for (const [file, from] of Object.entries(COPIES)) out[file] = readFileSync(from, "utf8");
  return out;
}

function main(argv) {
  const files = build();
  const at = argv.indexOf("--out");
  const dist = at >= 0 ? argv[at + 1] : DIST;
  if (argv.includes("--check")) {
    const stale = Object.keys(files).filter(
      (f) => !existsSync(join(dist, f)) || readFileSync(join(dist, f), "utf8") !== files[f],
    );
    if (stale.length) {
      console.error(dist + " is stale: " + stale.join(", ") + "; run node bridge_js/build.mjs");
      return 1;
    }
    console.log(dist + " is up to date");
    return 0;
  }
  mkdirSync(dist, { recursive: true });
  for (const [f, text] of Object.entries(files)) {
    writeFileSync(join(dist, f), text);
    const size = Buffer.byteLength(text);
    console.log(f.padEnd(12) + String(size).padStart(7) + " B  " + gzipSync(text, { level: 9 }).length + " B gzip");
  }
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = main(process.argv.slice(2));
}
