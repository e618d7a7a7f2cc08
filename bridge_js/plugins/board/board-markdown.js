// Markdown for descriptions and comments: markdownNode draws one text in a dialog,
// plainExcerpt gives a card's face a line of plain text.
//
// markdownNode parses with markdown-it and sanitises with DOMPurify (vendor/markdown.js,
// built from the pinned packages by bridge_js/build.mjs), each rule held twice over:
// - no raw HTML: markdown-it escapes it (html: false), and DOMPurify keeps only the tags
//   markdown makes, with no attribute but a link's href and title and a list's start;
// - links are http, https or mailto only (anything else stays text), and open in a new tab
//   with rel="noopener noreferrer": the page they open cannot reach or name this one;
// - no images: `![alt](url)` shows as a link to the image. An image would load from any
//   host as the card is read, telling that host who read it and when (a tracking pixel),
//   and the plugin's CSP would block most of them anyway; a card's pictures are its
//   attachments, which the board serves itself.
//
// plainExcerpt is for the card faces of a whole board: no parser, no DOM, no sanitiser,
// only a light strip of markdown's marks over the text's start. Its output is text, for
// textContent, never HTML.
import { DOMPurify, MarkdownIt } from "./vendor/markdown.js";
import { MENTION, mentionName } from "./board-comments.js";

const SAFE_LINK = /^(?:https?:|mailto:)/i;

const parser = new MarkdownIt("default", { html: false, linkify: true, breaks: true, typographer: false });
parser.disable("image");
// A bare "notes.md" or "www.example.com" stays text: only a scheme (https://, mailto:) makes a link.
parser.linkify.set({ fuzzyLink: false });
parser.validateLink = (url) => SAFE_LINK.test(url.trim());

// The text as HTML, before the sanitiser (the node tests read it; the page uses markdownNode).
export function markdownHtml(text) {
  return parser.render(String(text ?? ""));
}

const PURIFY = {
  ALLOWED_TAGS: [
    "p",
    "br",
    "strong",
    "em",
    "s",
    "code",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "a",
    "hr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
  ],
  ALLOWED_ATTR: ["href", "title", "start"],
  ALLOWED_URI_REGEXP: SAFE_LINK,
  RETURN_DOM_FRAGMENT: true,
};

// One sanitiser of our own (its hook is not everyone's), made at the first use: the node
// tests import this module without a DOM.
let purifier = null;
function purify() {
  if (purifier) return purifier;
  purifier = DOMPurify(window);
  purifier.addHook("afterSanitizeAttributes", (node) => {
    if (node.nodeName !== "A") return;
    if (node.hasAttribute("href")) {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
  });
  return purifier;
}

// A comments list is drawn again whole on each change, and a long comment takes a
// millisecond or more to parse and sanitise: the last texts drawn are kept, and drawn again
// as copies (dropped oldest first).
const DRAWN = 400;
const drawn = new Map();

// <div class="markdown"> holding the text drawn safely, a node of its own. `mentions`:
// usernames whose @name is marked <span class="mention"> (outside code and links), as the
// notification names them.
export function markdownNode(text, { mentions = [] } = {}) {
  const source = String(text ?? "");
  const named = mentions.filter((u) => source.includes("@" + u));
  const key = named.join(" ") + "\u0000" + source;
  let node = drawn.get(key);
  if (!node) {
    node = document.createElement("div");
    node.className = "markdown";
    node.append(purify().sanitize(markdownHtml(source), PURIFY));
    if (named.length) markMentions(node, new Set(named));
    if (drawn.size >= DRAWN) drawn.delete(drawn.keys().next().value);
    drawn.set(key, node);
  }
  return node.cloneNode(true);
}

function markMentions(root, usernames) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (/** @type {Text} */ t) =>
      t.data.includes("@") && !(/** @type {Element} */ (t.parentElement).closest("a, code")) ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_REJECT,
  });
  /** @type {Text[]} */
  const texts = [];
  while (walker.nextNode()) texts.push(/** @type {Text} */ (walker.currentNode));
  for (const t of texts) {
    const parts = [];
    let last = 0;
    for (const match of t.data.matchAll(MENTION)) {
      const name = mentionName(match);
      if (!usernames.has(name)) continue;
      const at = match.index + match[1].length;
      parts.push(t.data.slice(last, at));
      const span = document.createElement("span");
      span.className = "mention";
      span.textContent = "@" + name;
      parts.push(span);
      last = at + 1 + name.length;
    }
    if (!parts.length) continue;
    parts.push(t.data.slice(last));
    t.replaceWith(...parts.filter((p) => p !== ""));
  }
}

// --- excerpt ----------------------------------------------------------------------------------

// Only the text's start is looked at: a face shows `max` characters, and a long
// description costs no more than a short one.
const WINDOW = (max) => max * 4 + 128;

const LINE_MARKS = [
  /^ {0,3}(?:```|~~~).*$/gm, // code fences (the code stays)
  /^ {0,3}(?:[-*_] *){3,}$/gm, // rules
  /^ {0,3}=+ *$/gm, // a heading's underline
  /^ {0,3}#{1,6}(?=\s|$)/gm, // headings
  /^ {0,3}(?:> ?)+/gm, // quotes
  /^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?/gm, // list items and task boxes
  /^ {0,3}\|?(?: *:?-+:? *\|)+ *:?-*:? *$/gm, // a table's rule
];
const INLINE = [
  [/!?\[([^\]\n]*)\]\([^)\n]*\)/g, "$1"], // links and images: their text
  [/!?\[([^\]\n]*)\]\[[^\]\n]*\]/g, "$1"], // reference links
  [/<((?:https?:|mailto:)[^>\s]+)>/g, "$1"], // autolinks
  [/(\*\*|__|~~)(?=\S)([^\n]*?\S)\1/g, "$2"], // strong, strikethrough
  [/(^|[^\w*])\*(?=\S)([^*\n]*?\S)\*(?!\w)/g, "$1$2"], // *em*
  [/(^|[^\w])_(?=\S)([^_\n]*?\S)_(?!\w)/g, "$1$2"], // _em_, never snake_case
  [/`+([^`\n]*)`+/g, "$1"], // code
  [/\|/g, " "], // table cells
  [/&(amp|lt|gt|quot|#39|nbsp);/g, (_, name) => ENTITIES[name]], // as the dialog shows them
];
const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'", nbsp: " " };
// An escaped mark (\*) is held aside as a private-use character while the marks go.
const ESCAPED = /\\([\\`*_{}[\]()#+\-.!|~>])/g;
const HELD = /[\uE000-\uE07F]/g;
const hold = (_, mark) => String.fromCharCode(0xe000 + mark.charCodeAt(0));
const release = (c) => String.fromCharCode(c.charCodeAt(0) - 0xe000);

// Faces are drawn again as a window scrolls and as cards change: the last texts' excerpts
// are kept (a board's worth), each looked up by its text.
const KEPT = 10_000;
const kept = new Map();

// The text as one line of plain text, at most `max` characters: cut at a word, with "…".
export function plainExcerpt(text, max = 140) {
  const source = String(text ?? "");
  const key = max === 140 ? source : max + "\u0000" + source;
  let excerpt = kept.get(key);
  if (excerpt === undefined) {
    if (kept.size >= KEPT) kept.clear();
    excerpt = strip(source, max);
    kept.set(key, excerpt);
  }
  return excerpt;
}

function strip(source, max) {
  let s = source;
  if (s.length > WINDOW(max)) s = s.slice(0, WINDOW(max));
  s = s.replace(ESCAPED, hold);
  for (const mark of LINE_MARKS) s = s.replace(mark, "");
  for (const [mark, by] of INLINE) s = s.replace(mark, by);
  // Only runs and other spaces are replaced: a lone space, the most of them, stays as it is.
  s = s
    .replace(HELD, release)
    .replace(/\s{2,}|[^\S ]/g, " ")
    .trim();
  if (s.length <= max) return s;
  const cut = s.slice(0, max); // the ellipsis takes the place of the space cut at
  const space = cut.lastIndexOf(" ");
  return (space > max / 2 ? cut.slice(0, space) : cut.slice(0, max - 1)).replace(/[\s.,;:!?-]+$/, "") + "…";
}
