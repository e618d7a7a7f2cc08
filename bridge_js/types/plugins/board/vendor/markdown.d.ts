// What tsc reads for plugins/board/vendor/markdown.js, a generated minified bundle it must
// not check: the bundled packages' own declarations. tsconfig.json's rootDirs lays this
// folder over bridge_js, so "./vendor/markdown.js" finds this file first.
export { default as DOMPurify } from "dompurify";
export { default as MarkdownIt } from "markdown-it";
