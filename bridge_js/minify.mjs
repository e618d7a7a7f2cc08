// Name shortening and compaction for build.mjs, without a parser or any dependency.
//
// rename: every name the bundle binds (const/let, function, parameters, destructuring,
// catch) gets one short name, the same for every binding and every use of that name. Two
// names share a short name only when their spans never meet: a name's span covers where
// each of its bindings is visible (over-approximated: the whole block around a const, a
// function's parameters through its body, an arrow with an expression body through the
// end of the bracket around it) and every token that uses it. A use of one can then
// never fall where the other is bound, so every use still finds the binding it had; a
// one-to-one renaming needs no more scope analysis than that. What has to be right is
// which identifiers are names at all:
//   - after `.` or `?.`: a property, kept;
//   - an object literal's key, method, getter or setter, a class member: kept;
//   - a shorthand `{a}` (literal or pattern): written `{a:x}` so the key stays;
//   - a class's name: kept (it is visible as BridgeError.name);
//   - everything else: a name, renamed when the bundle binds it.
// A new name never equals any name left as it is (globals such as Object or window,
// keywords), and a bound name must not be a built-in global (the bundle reaches the
// browser only through the window its footer passes in). What this cannot read safely
// (labels, switch, var, eval, with, comments after code, template literals) it refuses.
// A regex literal right after `)` is read as a division, as squeeze() reads it.
//
// compact: drops what no statement needs (see there).

const PUNCTUATORS = [
  ">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=",
  "=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "**", "++", "--",
  "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>",
];
const RESERVED = new Set(
  ("break case catch class const continue debugger default delete do else enum export extends " +
    "false finally for function if import in instanceof let new null return super switch this " +
    "throw true try typeof var void while with yield await implements interface package " +
    "private protected public static").split(" "),
);
// Words that are names in some places and syntax in others: never renamed, never made.
const CONTEXTUAL = new Set(["of", "get", "set", "async", "static", "arguments", "eval", "as", "from"]);
const MODIFIERS = new Set(["get", "set", "async", "static"]);
// A keyword after which `{` starts an object literal or a pattern rather than a block.
const EXPRESSION_KEYWORDS = new Set(
  "return typeof case in of new delete void throw yield await instanceof const let var".split(" "),
);
const BLOCK_KEYWORDS = new Set(["else", "try", "finally", "do", "catch"]);
const REGEX_KEYWORDS = new Set(
  "return typeof case in of delete void throw new instanceof yield await do else".split(" "),
);
const BROWSER_GLOBALS = ["window", "self", "document", "globalThis", "location", "navigator"];

const fail = (message, token) => {
  throw new Error("rename: " + message + (token ? " at `" + token.v + "` (token " + token.i + ")" : ""));
};

// Splits squeezed code into tokens {t, v}: t is "ws", "id", "num", "str", "re" or "p".
export function tokenize(text) {
  const out = [];
  let i = 0;
  const last = () => {
    for (let k = out.length - 1; k >= 0; k--) if (out[k].t !== "ws") return out[k];
    return null;
  };
  const regexAllowed = () => {
    const p = last();
    if (!p) return true;
    if (p.t === "id") return REGEX_KEYWORDS.has(p.v);
    if (p.t !== "p") return false;
    return p.v !== ")" && p.v !== "]" && p.v !== "++" && p.v !== "--";
  };
  const push = (t, end) => {
    out.push({ t, v: text.slice(i, end), i: out.length });
    i = end;
  };
  while (i < text.length) {
    const c = text[i];
    if (c === " " || c === "\n" || c === "\t") {
      let j = i;
      while (j < text.length && (text[j] === " " || text[j] === "\n" || text[j] === "\t")) j++;
      push("ws", j);
    } else if (c === "`") {
      fail("template literals are not supported");
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (text[j] !== c) {
        if (j >= text.length || text[j] === "\n") fail("unterminated string");
        j += text[j] === "\\" ? 2 : 1;
      }
      push("str", j + 1);
    } else if (/[A-Za-z_$]/.test(c)) {
      let j = i + 1;
      while (j < text.length && /[\w$]/.test(text[j])) j++;
      push("id", j);
    } else if (/\d/.test(c) || (c === "." && /\d/.test(text[i + 1] || ""))) {
      let j = i + 1;
      while (j < text.length && (/[\w.]/.test(text[j]) || (/[+-]/.test(text[j]) && /[eE]/.test(text[j - 1]) && !/^0[xX]/.test(text.slice(i, j))))) j++;
      push("num", j);
    } else if (c === "/" && (text[i + 1] === "/" || text[i + 1] === "*")) {
      fail("comments must sit on their own lines");
    } else if (c === "/" && regexAllowed()) {
      let j = i + 1;
      let inClass = false;
      while (inClass || text[j] !== "/") {
        if (j >= text.length || text[j] === "\n") fail("unterminated regex");
        if (text[j] === "[") inClass = true;
        else if (text[j] === "]") inClass = false;
        j += text[j] === "\\" ? 2 : 1;
      }
      j++;
      while (j < text.length && /[a-z]/.test(text[j])) j++;
      push("re", j);
    } else {
      let p = PUNCTUATORS.find((q) => text.startsWith(q, i));
      if (p === "?." && /\d/.test(text[i + 2] || "")) p = null;
      if (!p && !"{}()[];,<>+-*/%&|^!~?:=.".includes(c)) fail("unexpected character " + JSON.stringify(c));
      push("p", i + (p ? p.length : 1));
    }
  }
  return out;
}

const isOpen = (s) => s && s.t === "p" && (s.v === "(" || s.v === "[" || s.v === "{");
const isClose = (s) => s && s.t === "p" && (s.v === ")" || s.v === "]" || s.v === "}");
const is = (s, v) => !!s && s.t === "p" && s.v === v;
const isWord = (s, v) => !!s && s.t === "id" && s.v === v;

// Gives every significant token its role: "kw", "prop", "key", "method", "modifier",
// "shorthand" or "name". Brackets get `close`/`open` and braces a `kind`.
function classify(S) {
  const stack = [];
  let classPending = false;
  for (let k = 0; k < S.length; k++) {
    const s = S[k];
    const prev = S[k - 1];
    const next = S[k + 1];
    const inner = stack.length ? S[stack[stack.length - 1]] : null;
    s.parent = inner;
    if (isOpen(s)) {
      if (s.v === "{") {
        if (classPending) {
          s.kind = "class";
          classPending = false;
        } else if (!prev || (prev.t === "p" && [")", "=>", ";", "{", "}"].includes(prev.v))) {
          s.kind = "block";
        } else if (prev.t === "p") {
          s.kind = "object";
        } else if (prev.t === "id" && BLOCK_KEYWORDS.has(prev.v)) {
          s.kind = "block";
        } else if (prev.t === "id" && EXPRESSION_KEYWORDS.has(prev.v)) {
          s.kind = "object";
        } else {
          fail("cannot tell what this brace opens", s);
        }
      }
      stack.push(k);
      continue;
    }
    if (isClose(s)) {
      const o = stack.pop();
      if (o === undefined || "([{".indexOf(S[o].v) !== ")]}".indexOf(s.v)) fail("unbalanced bracket", s);
      S[o].close = k;
      s.open = o;
      continue;
    }
    if (s.t !== "id") continue;
    if (s.v === "eval" || s.v === "with" || s.v === "switch") fail("not supported by the build", s);
    if (s.v === "class") classPending = true;
    if (is(prev, ".") || is(prev, "?.")) {
      s.role = "prop";
      continue;
    }
    const kind = inner && inner.v === "{" ? inner.kind : null;
    const atMember =
      (kind === "object" && (prev === inner || is(prev, ","))) ||
      (kind === "class" && (prev === inner || is(prev, ";") || (is(prev, "}") && S[prev.open].parent === inner))) ||
      ((kind === "object" || kind === "class") && prev.role === "modifier");
    if (atMember) {
      const modifier =
        MODIFIERS.has(s.v) && next && (next.t === "id" || next.t === "str" || is(next, "[") || is(next, "*"));
      if (modifier) s.role = "modifier";
      else if (is(next, "(")) s.role = "method";
      else if (kind === "object" && is(next, ":")) s.role = "key";
      else if (kind === "object" && (is(next, ",") || is(next, "}") || is(next, "="))) s.role = "shorthand";
      else if (kind === "class" && (is(next, "=") || is(next, ";"))) s.role = "key";
      else fail("cannot classify this member", s);
      continue;
    }
    if (is(next, ":") && (!prev || is(prev, ";") || is(prev, "}") || (is(prev, "{") && prev.kind === "block"))) {
      fail("labels are not supported", s);
    }
    s.role = RESERVED.has(s.v) ? "kw" : "name";
  }
  if (stack.length) fail("unbalanced bracket", S[stack[stack.length - 1]]);
}

// Where a binding is visible, over-approximated: [first, last] token index. The innermost
// block around a const/let/function declaration; a function's or catch's parameter list
// through its body; an arrow with an expression body through the end of the bracket (or
// program) around it. A larger span only means fewer names share a short one.
function blockAround(S, k) {
  for (let p = S[k].parent; p; p = p.parent) if (p.v === "{" && p.kind === "block") return [S.indexOf(p), p.close];
  return [0, S.length - 1];
}

// Collects the names the code binds, each with the spans its bindings are visible in.
// Missing a binding only leaves its name long where nothing else binds it.
function bindings(S) {
  const bound = new Map();
  const kept = new Set();
  const bind = (s, span) => {
    if (s.role !== "name" && s.role !== "shorthand") fail("cannot bind this", s);
    if (!bound.has(s.v)) bound.set(s.v, []);
    bound.get(s.v).push(span);
  };
  // Skips one expression: to the next `,` or `;` at this level, or the enclosing close.
  const skipExpression = (k) => {
    while (k < S.length) {
      const s = S[k];
      if (is(s, ",") || is(s, ";") || isClose(s) || isWord(s, "of") || isWord(s, "in")) return k;
      k = isOpen(s) ? s.close + 1 : k + 1;
    }
    return k;
  };
  // A binding target at k (a name or a pattern) with an optional default; returns the
  // index after it.
  const target = (k, span) => {
    const s = S[k];
    if (!s) return k;
    if (s.t === "id" && s.role === "name") bind(s, span);
    else if (is(s, "{") || is(s, "[")) pattern(k, span);
    else fail("cannot read this binding", s);
    k = isOpen(s) ? s.close + 1 : k + 1;
    return is(S[k], "=") ? skipExpression(k + 1) : k;
  };
  const pattern = (open, span) => {
    const close = S[open].close;
    let k = open + 1;
    while (k < close) {
      const s = S[k];
      if (is(s, ",")) {
        k++;
      } else if (is(s, "...")) {
        k = target(k + 1, span);
      } else if (S[open].v === "{" && s.role === "shorthand") {
        bind(s, span);
        k = is(S[k + 1], "=") ? skipExpression(k + 2) : k + 1;
      } else if (S[open].v === "{") {
        // key: target, the key being a name, string, number or [computed]
        k = isOpen(s) ? s.close + 1 : k + 1;
        if (!is(S[k], ":")) fail("cannot read this pattern", s);
        k = target(k + 1, span);
      } else {
        k = target(k, span);
      }
    }
  };
  // A parameter list at `open`, visible through the block that follows it.
  const params = (open) => {
    if (!is(S[open], "(") || !is(S[S[open].close + 1], "{")) fail("expected parameters and a body", S[open]);
    const close = S[open].close;
    const span = [open, S[close + 1].close];
    let k = open + 1;
    while (k < close) {
      if (is(S[k], ",")) k++;
      else if (is(S[k], "...")) k = target(k + 1, span);
      else k = target(k, span);
    }
  };
  for (let k = 0; k < S.length; k++) {
    const s = S[k];
    if (s.role === "kw" && s.v === "var") {
      fail("var is not supported (use const or let)", s);
    } else if (s.role === "kw" && (s.v === "const" || s.v === "let")) {
      const span = blockAround(S, k);
      let j = target(k + 1, span);
      while (is(S[j], ",")) j = target(j + 1, span);
    } else if (s.role === "kw" && s.v === "function") {
      let j = k + 1;
      if (is(S[j], "*")) j++;
      if (S[j].t === "id") bind(S[j++], blockAround(S, k));
      params(j);
    } else if (s.role === "kw" && s.v === "class") {
      // A class keeps its name: it is visible as BridgeError.name.
      if (S[k + 1].t === "id" && S[k + 1].v !== "extends") kept.add(S[k + 1].v);
    } else if (s.role === "kw" && s.v === "catch" && is(S[k + 1], "(")) {
      const open = k + 1;
      if (!is(S[S[open].close + 1], "{")) fail("expected a catch block", s);
      target(open + 1, [open, S[S[open].close + 1].close]);
    } else if (is(s, "=>")) {
      const p = S[k - 1];
      const first = is(p, ")") ? p.open : k - 1;
      const last = is(S[k + 1], "{")
        ? S[k + 1].close
        : s.parent ? s.parent.close : S.length - 1;
      if (p.t === "id") {
        bind(p, [first, last]);
      } else if (is(p, ")")) {
        const span = [first, last];
        let j = p.open + 1;
        while (j < k - 1) {
          if (is(S[j], ",")) j++;
          else if (is(S[j], "...")) j = target(j + 1, span);
          else j = target(j, span);
        }
      } else {
        fail("cannot read these arrow parameters", s);
      }
    } else if (s.role === "method") {
      params(k + 1);
    }
  }
  for (const name of kept) bound.delete(name);
  for (const name of CONTEXTUAL) bound.delete(name);
  return bound;
}

// Short names whose characters come in the order of how often they already occur in the
// code left as it is (strings, keywords, properties): gzip codes those in fewer bits.
function* shortNames(text) {
  const seen = (c) => text.split(c).length;
  const by = (chars) => [...chars].sort((a, b) => seen(b) - seen(a) || chars.indexOf(a) - chars.indexOf(b)).join("");
  const first = by("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$");
  const rest = first + by("0123456789");
  for (const a of first) yield a;
  for (const a of first) for (const b of rest) yield a + b;
  for (const a of first) for (const b of rest) for (const c of rest) yield a + b + c;
}

// Returns `code` with every bound name shortened; `globals` are names the code may use
// without binding them (default: this realm's globals and the browser's window names).
// The names a piece of code uses or binds: no properties, keys or keywords.
export function namesUsed(code) {
  const S = tokenize(code).filter((t) => t.t !== "ws");
  classify(S);
  return new Set(S.filter((s) => s.role === "name" || s.role === "shorthand").map((s) => s.v));
}

const overlaps = (a, b) => a.some(([x, y]) => b.some(([u, v]) => x <= v && u <= y));

// Returns `code` with every bound name shortened; `globals` are names the code may use
// without binding them (default: this realm's globals and the browser's window names).
// Names whose spans (bindings' visibility and every use) never overlap may share one short
// name, as a minifier's per-scope names do.
export function rename(code, globals = Object.getOwnPropertyNames(globalThis).concat(BROWSER_GLOBALS)) {
  const tokens = tokenize(code);
  const S = tokens.filter((t) => t.t !== "ws");
  classify(S);
  const bound = bindings(S);
  const globalNames = new Set(globals);
  for (const name of bound.keys()) {
    if (globalNames.has(name)) fail("the bundle binds the global name " + name);
  }
  const taken = new Set([...RESERVED, ...CONTEXTUAL]);
  S.forEach((s, k) => {
    if (s.t !== "id" || !["name", "shorthand", "kw"].includes(s.role)) return;
    if (bound.has(s.v)) bound.get(s.v).push([k, k]);
    else taken.add(s.v);
  });
  const users = new Map();
  const names = new Map();
  const kept = S.filter((s) => s.t !== "id" || !bound.has(s.v) || !["name", "shorthand"].includes(s.role));
  const candidates = [...shortNames(kept.map((s) => s.v).join(" "))];
  // The most used names pick first, taking the shortest name nothing overlapping holds.
  for (const [name, spans] of [...bound].sort((a, b) => b[1].length - a[1].length)) {
    for (const short of candidates) {
      if (taken.has(short)) continue;
      const held = users.get(short) || [];
      if (overlaps(held, spans)) continue;
      users.set(short, held.concat(spans));
      names.set(name, short);
      break;
    }
  }
  let out = "";
  for (const t of tokens) {
    const short = t.t === "id" ? names.get(t.v) : undefined;
    if (short === undefined || (t.role !== "name" && t.role !== "shorthand")) out += t.v;
    else out += t.role === "shorthand" ? t.v + ":" + short : short;
  }
  return out;
}

// Drops what no statement needs: line breaks after `{ ; , ( [` and after binary operators
// that cannot end an expression, before `} ) ]`, and after a `}` that surely ends a
// statement (elsewhere a line break may end a statement by automatic semicolon insertion,
// so it stays); `;` before `}` (unless it is an empty statement body); a trailing comma
// before `} ) ]` (not after another comma or `[`, where it makes an array hole); the
// parentheses around an arrow's single plain parameter and after a `new X` given no
// arguments; the strictness of `typeof x === "s"`, which compares two strings either way.
// Writes true/false as !0/!1 (not where a `.`, `[` or `(` follows), undefined as void 0
// and 15000 as 15e3. Then joins a const (or let) statement that directly follows another
// on the same line into it: `const a=1;const b=2;` becomes `const a=1,b=2;`, which
// declares and evaluates the same, in the same order.
const JOIN_AFTER = new Set(["{", ";", ",", "(", "[", "=", ":", "?", "||", "&&", "??", "=>", "==", "===", "!=", "!=="]);
const CLOSERS = new Set(["}", ")", "]"]);

const STATEMENT_START = (s) => !s || is(s, ";") || is(s, "{") || is(s, "}");

// Whether a `}` closes a statement for sure (a block of if/for/while/catch/else/try, a
// function or class declaration, a method), so that no line break is needed after it. An
// arrow's or a function expression's body may be followed by more of its expression.
function endsStatement(S, close) {
  if (!is(close, "}")) return false;
  const open = S[close.open];
  let before = S[close.open - 1];
  if (open.kind === "class") {
    let k = close.open - 1;
    while (k >= 0 && !isWord(S[k], "class")) k--;
    return k >= 0 && STATEMENT_START(S[k - 1]);
  }
  if (open.kind !== "block") return false;
  if (STATEMENT_START(before)) return true;
  if (before.t === "id" && ["else", "try", "finally", "do"].includes(before.v)) return true;
  if (!is(before, ")")) return false;
  const head = S[before.open - 1];
  if (!head) return false;
  if (head.role === "kw" && ["if", "for", "while", "catch"].includes(head.v)) return true;
  if (head.role === "method") return true;
  return isWord(S[before.open - 2], "function") && STATEMENT_START(S[before.open - 3]);
}

export function compact(code) {
  const tokens = tokenize(code);
  const S = tokens.filter((t) => t.t !== "ws");
  classify(S);
  const drop = new Set();
  const replace = new Map();
  S.forEach((s, k) => {
    const [prev, next] = [S[k - 1], S[k + 1]];
    if (is(s, ",") && next && next.t === "p" && CLOSERS.has(next.v) && !is(prev, ",") && !is(prev, "[")) drop.add(s);
    if (is(s, "(") && next && next.t === "id" && !RESERVED.has(next.v) && is(S[k + 2], ")") && is(S[k + 3], "=>")) {
      // `async (x) =>` keeps a space: `async x=>`
      if (prev && prev.t === "id") replace.set(s, " ");
      else drop.add(s);
      drop.add(S[k + 2]);
    }
    // `;}`: the block's end ends the statement, unless the `;` is an empty statement body
    if (is(s, ";") && is(next, "}") && !isWord(prev, "else") && !isWord(prev, "do")) {
      const head = is(prev, ")") ? S[prev.open - 1] : null;
      if (!(head && ["if", "for", "while"].includes(head.v))) drop.add(s);
    }
    // `undefined` is never bound here (rename refuses binding a global's name); `true` and
    // `false` as values, not before `.`, `[` or `(`, which would bind tighter than `!`
    if (s.role === "name" && s.v === "undefined") replace.set(s, "void 0");
    if (s.role === "kw" && (s.v === "true" || s.v === "false") && !(next && next.t === "p" && [".", "?.", "[", "("].includes(next.v))) {
      replace.set(s, s.v === "true" ? "!0" : "!1");
    }
    // `new Map()` is `new Map`, unless something follows that `new Map` would take instead
    if (isWord(s, "new") && next && next.t === "id" && is(S[k + 2], "(") && is(S[k + 3], ")")) {
      const after = S[k + 4];
      if (!(after && after.t === "p" && [".", "?.", "[", "("].includes(after.v))) drop.add(S[k + 2]).add(S[k + 3]);
    }
    const zeros = s.t === "num" && /^[1-9]\d*?(0{3,})$/.exec(s.v);
    if (zeros) replace.set(s, s.v.slice(0, -zeros[1].length) + "e" + zeros[1].length);
    if (isWord(s, "typeof") && next && next.t === "id") {
      let j = k + 2;
      while (is(S[j], ".") && S[j + 1] && S[j + 1].t === "id") j += 2;
      const op = S[j];
      if ((is(op, "===") || is(op, "!==")) && S[j + 1] && S[j + 1].t === "str") replace.set(op, op.v.slice(0, 2));
    }
  });
  let out = "";
  let prev = null;
  tokens.forEach((t, k) => {
    if (drop.has(t)) return;
    if (t.t !== "ws") {
      out += replace.has(t) ? replace.get(t) : t.v;
      prev = t;
      return;
    }
    let next = tokens[k + 1];
    while (next && drop.has(next)) next = tokens[tokens.indexOf(next) + 1];
    if (!t.v.includes("\n")) {
      // `return false` became `return !1`: no space needed
      if (!(replace.get(next) || "").startsWith("!")) out += t.v;
    } else if (!(prev && next && ((prev.t === "p" && JOIN_AFTER.has(prev.v)) || (next.t === "p" && CLOSERS.has(next.v)) || endsStatement(S, prev)))) {
      out += "\n";
    }
  });
  return mergeDeclarations(out);
}

function mergeDeclarations(code) {
  const tokens = tokenize(code);
  const S = tokens.filter((t) => t.t !== "ws");
  classify(S);
  // A line break at a statement's own level may end it by itself: such a statement is
  // left alone. One inside brackets cannot.
  const breaks = new Set();
  tokens.forEach((t, k) => {
    if (t.t === "ws" && t.v.includes("\n")) breaks.add(tokens[k + 1]);
  });
  const merge = new Set();
  for (let k = 0; k < S.length; k++) {
    const s = S[k];
    const prev = S[k - 1];
    if (s.role !== "kw" || (s.v !== "const" && s.v !== "let")) continue;
    if (prev && !is(prev, ";") && !is(prev, "{") && !is(prev, "}")) continue;
    let j = k + 1;
    while (j < S.length && !is(S[j], ";") && !isClose(S[j]) && !breaks.has(S[j])) j = isOpen(S[j]) ? S[j].close + 1 : j + 1;
    if (is(S[j], ";") && !breaks.has(S[j + 1]) && isWord(S[j + 1], s.v) && S[j + 1].role === "kw") merge.add(S[j]);
  }
  let out = "";
  for (let k = 0; k < tokens.length; k++) {
    if (!merge.has(tokens[k])) {
      out += tokens[k].v;
      continue;
    }
    // `;const ` becomes `,`
    out += ",";
    do k++;
    while (tokens[k].t === "ws");
    if (tokens[k + 1] && tokens[k + 1].t === "ws") k++;
  }
  return out;
}
