// board-markdown.js's pure parts: the parser's settings (what markdownHtml makes before the
// sanitiser, which needs a browser: tests/browser/test_card_discussion.py) and plainExcerpt.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { markdownHtml, plainExcerpt } from "../../plugins/board/board-markdown.js";

const links = (html) => [...html.matchAll(/<a href="([^"]*)"/g)].map((m) => m[1]);

describe("markdown in a comment or a description", () => {
  test("what people type in a card reads as they meant it", () => {
    assert.equal(markdownHtml("**Bold**, _em_ and `code`"), "<p><strong>Bold</strong>, <em>em</em> and <code>code</code></p>\n");
    assert.equal(markdownHtml("- one\n- two"), "<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n");
    assert.equal(markdownHtml("first line\nsecond line"), "<p>first line<br>\nsecond line</p>\n", "a new line in the box is one on the page");
    assert.equal(markdownHtml("a snake_case_name"), "<p>a snake_case_name</p>\n");
  });

  test("raw HTML stays text", () => {
    assert.equal(markdownHtml("<b>not bold</b>"), "<p>&lt;b&gt;not bold&lt;/b&gt;</p>\n");
    assert.equal(markdownHtml('<img src=x onerror="alert(1)">'), "<p>&lt;img src=x onerror=&quot;alert(1)&quot;&gt;</p>\n");
    assert.doesNotMatch(markdownHtml("<script>alert(1)</script>\n\n<div onclick=x>hi</div>"), /<(script|div)/);
  });

  test("links are http, https or mailto; any other scheme or a relative address stays text", () => {
    const html = markdownHtml(
      "[a](https://example.com/a) [b](http://example.com/b) [c](mailto:bob@example.com) " +
        "[d](javascript:alert(1)) [e](JaVaScRiPt:alert(1)) [f](data:text/html,x) [g](vbscript:x) [h](/admin) [i](file:///etc/passwd)",
    );
    assert.deepEqual(links(html), ["https://example.com/a", "http://example.com/b", "mailto:bob@example.com"]);
    assert.match(html, /\[d\]\(javascript:alert\(1\)\)/);
    assert.doesNotMatch(markdownHtml("<javascript:alert(1)>"), /<a /);
  });

  test("a bare address is a link without a sentence's final punctuation; a file's name is not", () => {
    const html = markdownHtml("see https://example.com/spec. Or notes.md, www.example.com and javascript:alert(1)");
    assert.deepEqual(links(html), ["https://example.com/spec"]);
  });

  test("an image shows as a link to it, never loaded", () => {
    const html = markdownHtml("![a cat](https://example.com/cat.png) ![x](javascript:alert(1))");
    assert.doesNotMatch(html, /<img/);
    assert.deepEqual(links(html), ["https://example.com/cat.png"]);
  });

  test("an @mention is left as typed for the page to mark", () => {
    assert.equal(markdownHtml("@bob please check"), "<p>@bob please check</p>\n");
  });
});

describe("a card face's plain excerpt", () => {
  test("markdown's marks go, the words stay, on one line", () => {
    const text = "# Launch plan\n\n**Bold** move with a [link](https://x.example) and `code`.\n- one\n- [x] two\n> quoted ~~old~~";
    assert.equal(plainExcerpt(text), "Launch plan Bold move with a link and code. one two quoted old");
    assert.equal(plainExcerpt("a snake_case_name and 2*3*4 and _em_"), "a snake_case_name and 2*3*4 and em");
    assert.equal(plainExcerpt("```js\nconst x = 1;\n```\nafter"), "const x = 1; after");
    assert.equal(plainExcerpt("| a | b |\n|---|:--|\n| 1 | 2 |"), "a b 1 2");
    assert.equal(plainExcerpt("![a cat](https://e.example/c.png) and <https://e.example>"), "a cat and https://e.example");
    assert.equal(plainExcerpt("a \\*star\\* and \\_this\\_\n***\nbelow"), "a *star* and _this_ below");
    assert.equal(plainExcerpt("Title\n=====\nR&amp;D &lt;3 &copy;"), "Title R&D <3 &copy;");
  });

  test("raw HTML is kept as text: the face sets textContent", () => {
    assert.equal(plainExcerpt("<img src=x onerror=alert(1)>"), "<img src=x onerror=alert(1)>");
  });

  test("nothing, or no text, gives an empty excerpt", () => {
    for (const value of [undefined, null, "", "   \n\n", "---", "- "]) assert.equal(plainExcerpt(value), "", String(value));
  });

  test("a long text is cut at a word with an ellipsis, within the length asked", () => {
    const words = "lorem ipsum dolor sit amet ".repeat(20);
    const short = plainExcerpt(words, 40);
    assert.equal(short, "lorem ipsum dolor sit amet lorem ipsum…");
    assert.ok(short.length <= 40);
    assert.equal(plainExcerpt(words).length <= 140, true);
    assert.equal(plainExcerpt("x".repeat(300), 20), "x".repeat(19) + "…", "one long word is cut where it must be");
    assert.equal(plainExcerpt("Done, shipped. " + "y".repeat(20), 21), "Done, shipped…", "no dangling punctuation");
    assert.equal(plainExcerpt("short"), "short");
  });

  test("a huge description costs what its start costs", () => {
    const start = "**Start** here. ".repeat(30);
    assert.equal(plainExcerpt(start + "z".repeat(1_000_000)), plainExcerpt(start));
  });
});

test("the parser and sanitiser come from the bundle build.mjs writes, with their licences beside it", () => {
  const vendor = new URL("../../plugins/board/vendor/", import.meta.url);
  const bundle = readFileSync(new URL("markdown.js", vendor), "utf8");
  assert.match(bundle, /^\/\* built by bridge_js\/build\.mjs from dompurify@[\d.]+ .*markdown-it@[\d.]+ MIT/);
  const licences = readFileSync(new URL("LICENSES.txt", vendor), "utf8");
  for (const name of ["dompurify", "entities", "linkify-it", "markdown-it", "mdurl", "punycode.js", "uc.micro"]) {
    assert.match(licences, new RegExp("^" + name.replace(".", "\\.") + "@", "m"), name);
  }
});
