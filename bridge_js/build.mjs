#!/usr/bin/env node
// Bundles bridge_js/src into two classic scripts with esbuild, then minifies them with
// terser (both pinned in package.json; `npm ci` in bridge_js installs them):
//   dist/kanban.js  -> window.steamHarnessKanban (the plugin SDK)
//   dist/host.js    -> window.KanbanHost (the board page relay)
// and dist/testing.mjs, the plugin test host (testing/host.mjs) with the SDK inside, one
// ES module, minified with its names kept and its sources in an inline source map. The
// bundles have no runtime dependency.
// Also plugins/board/vendor/markdown.js: markdown-it and DOMPurify (pinned devDependencies)
// as one minified ES module the Board plugin imports as it is served, with the licences of
// every package in it beside it in vendor/LICENSES.txt.
//   node bridge_js/build.mjs          write dist/ and vendor/, print raw and gzip sizes
//   node bridge_js/build.mjs --check  exit 1 if dist/ or vendor/ differs from what would be written
//   --out DIR                         use DIR instead of dist/ (tests)
//   --vendor DIR                      use DIR instead of plugins/board/vendor/ (tests)

import { readFileSync, readdirSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const ROOT = dirname(fileURLToPath(import.meta.url));
const SRC = join(ROOT, "src");
const DIST = join(ROOT, "dist");
const VENDOR = join(ROOT, "plugins", "board", "vendor");

// Each bundle is this entry module, run in one IIFE: it imports a factory from src/ and
// calls it with the page's window.
const BUNDLES = {
  "kanban.js": 'import { createKanban } from "./sdk.js";\nwindow.steamHarnessKanban ||= createKanban(window);\n',
  "host.js": 'import { createHost } from "./host.js";\nwindow.KanbanHost = createHost(window);\n',
};

const BANNER = "/* built from bridge_js/src; do not edit */";
const TESTING_BANNER =
  "/* built from bridge_js/testing and bridge_js/src; do not edit. The readable sources are in\n" +
  " * this file's source map: `node --enable-source-maps --test` shows stack frames at them. */";
// Every browser that runs the board: optional chaining, `??`, lookbehind. esbuild lowers
// anything newer the sources use (`||=`).
const TARGET = "es2020";

async function tools() {
  try {
    const [esbuild, terser] = await Promise.all([import("esbuild"), import("terser")]);
    return { esbuild, terser };
  } catch (err) {
    if (err.code !== "ERR_MODULE_NOT_FOUND") throw err;
    const e = new Error("esbuild and terser are not installed: run `npm ci` in bridge_js (" + err.message + ")");
    e.code = "BUILD_TOOLS_MISSING";
    throw e;
  }
}

// What every build below asks of esbuild: one bundle for TARGET, made in memory (the caller
// minifies, writes or compares it), text kept as UTF-8, no licence comments, and problems
// thrown rather than printed.
function esbuildBundle(esbuild, options) {
  return esbuild.build({
    absWorkingDir: ROOT,
    bundle: true,
    target: TARGET,
    charset: "utf8",
    legalComments: "none",
    write: false,
    logLevel: "silent",
    ...options,
  });
}

// The unminified bundle: modules in dependency order, what the entry never uses dropped.
async function bundle(esbuild, entry) {
  const result = await esbuildBundle(esbuild, {
    stdin: { contents: entry, resolveDir: SRC, sourcefile: "entry.js" },
    format: "iife",
    // The modules are strict; the bundle stays so as one classic script.
    banner: { js: '"use strict";' },
  });
  return result.outputFiles[0].text;
}

async function minify(terser, code) {
  const result = await terser.minify(code, {
    ecma: 2020,
    compress: { passes: 3 },
    // A name a plugin can observe stays as written: kanban.BridgeError.name. esbuild
    // makes the class `var BridgeError = class extends Error`, named after its binding.
    mangle: { reserved: ["BridgeError"] },
    format: { comments: false, preamble: BANNER },
  });
  return result.code + "\n";
}

// `minify: false` returns esbuild's output with the names as written (tests read the
// bundles' structure that way).
export async function build({ minify: shorten = true } = {}) {
  const { esbuild, terser } = await tools();
  const out = {};
  for (const [file, entry] of Object.entries(BUNDLES)) {
    const code = await bundle(esbuild, entry);
    out[file] = shorten ? await minify(terser, code) : code;
  }
  out["testing.mjs"] = await testingModule(esbuild, terser);
  return out;
}

// The plugin test host (testing/host.mjs) with the SDK in it, as one ES module of its own:
// a plugin's folder imports it from there (startplugin copies it in as kanban-testing.mjs),
// nothing installed. It is an artifact like the SDK, not a second copy of the sources to
// read: minified, but with every name as written (stack frames and `err.name` say
// createTestHost, BridgeError, ...) and an inline source map carrying the sources, so that
// `node --enable-source-maps --test` and a debugger show testing/*.mjs and src/*.js at their
// own lines. Inline, because the one file is copied and renamed: a linked map would not
// follow it.
async function testingModule(esbuild, terser) {
  const result = await esbuildBundle(esbuild, {
    entryPoints: [join(ROOT, "testing", "host.mjs")],
    outfile: join(DIST, "testing.mjs"),
    format: "esm",
    sourcemap: "external",
    sourcesContent: true,
  });
  const file = (ending) => result.outputFiles.find((f) => f.path.endsWith(ending)).text;
  const minified = await terser.minify(file(".mjs"), {
    ecma: 2020,
    module: true,
    compress: { passes: 2, keep_fnames: true, keep_classnames: true },
    mangle: false,
    sourceMap: { content: file(".mjs.map"), url: "inline", includeSources: true },
    format: { comments: false, preamble: TESTING_BANNER },
  });
  return minified.code + "\n";
}

// The Board's markdown parser and sanitiser. Served as a plain ES module (a plugin has no
// bundler at serve time), so they come as one committed file, rebuilt from the pinned
// packages and checked like dist/. Minified by esbuild alone: terser would gain little on
// third-party code and cost seconds in every check.
const VENDOR_ENTRY = 'export { default as MarkdownIt } from "markdown-it";\nexport { default as DOMPurify } from "dompurify";\n';

export async function buildVendor() {
  const { esbuild } = await tools();
  // The licences go whole into LICENSES.txt; the bundle names each package and points there.
  const result = await esbuildBundle(esbuild, {
    stdin: { contents: VENDOR_ENTRY, resolveDir: ROOT, sourcefile: "vendor-markdown.js" },
    format: "esm",
    platform: "browser",
    minify: true,
    metafile: true,
  });
  const packages = new Map();
  for (const input of Object.keys(result.metafile.inputs)) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match && !packages.has(match[1])) packages.set(match[1], packageInfo(match[1]));
  }
  const list = [...packages.values()].sort((a, b) => a.name.localeCompare(b.name));
  const banner =
    "/* built by bridge_js/build.mjs from " +
    list.map((p) => p.name + "@" + p.version + " " + p.license).join(", ") +
    ";\n * do not edit. The licences' full texts: LICENSES.txt beside this file. */\n";
  const licences = list
    .map((p) => "=".repeat(78) + "\n" + p.name + "@" + p.version + " " + p.license + "\n" + "=".repeat(78) + "\n\n" + p.text.trim() + "\n")
    .join("\n");
  return { "markdown.js": banner + result.outputFiles[0].text, "LICENSES.txt": licences };
}

// A package's name, version, licence and the text of its licence file (DOMPurify is under
// MPL-2.0 or Apache-2.0: its LICENSE file, Apache-2.0, is the one taken).
function packageInfo(name) {
  const folder = join(ROOT, "node_modules", name);
  const meta = JSON.parse(readFileSync(join(folder, "package.json"), "utf8"));
  const file = readdirSync(folder)
    .filter((f) => /^licen[cs]e/i.test(f))
    .sort()[0];
  if (!file) throw new Error(name + " ships no licence file");
  return { name, version: meta.version, license: meta.license, text: readFileSync(join(folder, file), "utf8") };
}

// What `--check` finds wrong with the folders, or null when they hold exactly what the build
// writes. Exported so the tests can try every case on one build rather than a build each.
export function checkOutputs({ files, vendor, dist, vendorDir }) {
  const differs = (path, text) => !existsSync(path) || readFileSync(path, "utf8") !== text;
  const stale = Object.keys(files).filter((f) => differs(join(dist, f), files[f]));
  if (stale.length) return dist + " is stale: " + stale.join(", ") + "; run node bridge_js/build.mjs";
  const staleVendor = Object.keys(vendor).filter((f) => differs(join(vendorDir, f), vendor[f]));
  if (staleVendor.length) return vendorDir + " is stale: " + staleVendor.join(", ") + "; run node bridge_js/build.mjs";
  const extraVendor = existsSync(vendorDir) ? readdirSync(vendorDir).filter((f) => !(f in vendor)) : [];
  if (extraVendor.length) return vendorDir + " has files the build does not write (" + extraVendor.join(", ") + "); remove them";
  // dist/ is served under /static/bridge/ before static/bridge/: a file left there that
  // the build no longer writes would shadow the one served as written.
  const extra = existsSync(dist) ? readdirSync(dist).filter((f) => !(f in files)) : [];
  if (extra.length) return dist + " has files the build does not write (not built: " + extra.join(", ") + "); remove them";
  return null;
}

async function main(argv) {
  let files, vendor;
  try {
    files = await build();
    vendor = await buildVendor();
  } catch (err) {
    if (err.code !== "BUILD_TOOLS_MISSING") throw err;
    console.error(err.message);
    return 2;
  }
  const option = (name, otherwise) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : otherwise);
  const dist = option("--out", DIST);
  const vendorDir = option("--vendor", VENDOR);
  if (argv.includes("--check")) {
    const problem = checkOutputs({ files, vendor, dist, vendorDir });
    if (problem) {
      console.error(problem);
      return 1;
    }
    console.log(dist + " and " + vendorDir + " are up to date");
    return 0;
  }
  mkdirSync(dist, { recursive: true });
  mkdirSync(vendorDir, { recursive: true });
  const written = [
    ...Object.entries(files).map(([f, text]) => [join(dist, f), f, text]),
    ...Object.entries(vendor).map(([f, text]) => [join(vendorDir, f), "vendor/" + f, text]),
  ];
  for (const [path, f, text] of written) {
    writeFileSync(path, text);
    const size = Buffer.byteLength(text);
    console.log(f.padEnd(20) + String(size).padStart(7) + " B  " + gzipSync(text, { level: 9 }).length + " B gzip");
  }
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
