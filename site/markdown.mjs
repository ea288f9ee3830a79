// The site's Markdown: a small subset converted by us (no dependency), and the snippets the
// check runs. Supported: # headings, paragraphs, - and 1. lists, > notes, ``` fences with a
// language, | tables |, `code`, **bold**, *em* and [links](url). A fence's language says what
// the check does with it: `js` runs (in Node and in the REPL page), `output` is what the js
// fence before it must print, `include <path>` embeds a repository file that another stage
// builds and runs (the C++ example and CMake project), `sh` and `text` are shown only.

const escapeHtml = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

// Inline markup on escaped text; code spans first so their contents stay literal.
function inline(text) {
  const codes = [];
  let s = text.replace(/`([^`]+)`/g, (_, c) => `\u0000${codes.push(c) - 1}\u0000`);
  s = escapeHtml(s)
    .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
    .replace(/\*([^*\s][^*]*)\*/g, "<em>$1</em>")
    .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_, t, href) => `<a href="${href.replace(/\.md(#|$)/, ".html$1")}">${t}</a>`);
  return s.replace(/\u0000(\d+)\u0000/g, (_, i) => `<code>${escapeHtml(codes[Number(i)])}</code>`);
}

const slug = (s) => s.toLowerCase().replace(/`/g, "").replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");

// Splits a page into blocks: fences (with their language and source line), and runs of text.
export function parseBlocks(md) {
  const lines = md.split("\n");
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = lines[i].match(/^```(.*)$/);
    if (!fence) {
      blocks.push({ kind: "line", text: lines[i] });
      continue;
    }
    const start = i + 1;
    const body = [];
    for (i++; i < lines.length && lines[i] !== "```"; i++) body.push(lines[i]);
    if (i === lines.length) throw new Error(`line ${start}: unclosed code fence`);
    blocks.push({ kind: "fence", lang: fence[1].trim(), code: body.join("\n"), line: start });
  }
  return blocks;
}

// The page's runnable snippets: each js fence with the output fence that follows it (if any).
export function snippets(md) {
  const fences = parseBlocks(md).filter((b) => b.kind === "fence");
  const out = [];
  fences.forEach((f, i) => {
    if (f.lang !== "js") return;
    const next = fences[i + 1];
    out.push({ line: f.line, code: f.code, expected: next?.lang === "output" ? next.code : null });
  });
  return out;
}

// Markdown to HTML; `include(path)` returns the text of an `include` fence's file; each js
// fence gets a link that opens it in the REPL page at `repl` (the code in the URL's hash).
export function toHtml(md, include, repl) {
  const html = [];
  let para = [];
  let list = null; // "ul" or "ol"
  let table = null;
  const flush = () => {
    if (para.length) html.push(`<p>${inline(para.join(" "))}</p>`);
    para = [];
    if (list) html.push(`</${list}>`);
    list = null;
    if (table) html.push(`${table.join("\n")}</tbody></table>`);
    table = null;
  };
  let title = null;
  for (const b of parseBlocks(md)) {
    if (b.kind === "fence") {
      flush();
      let { lang, code } = b;
      if (lang.startsWith("include ")) {
        const path = lang.slice(8).trim();
        code = include(path).replace(/\n$/, "");
        lang = `${{ cpp: "cpp", html: "html" }[path.split(".").pop()] ?? "cmake"}" data-file="${escapeHtml(path)}`;
      }
      html.push(`<pre class="code" data-lang="${lang}"><code>${escapeHtml(code)}</code></pre>`);
      if (lang === "js" && repl) html.push(`<p class="try"><a href="${repl}#${encodeURIComponent(code)}">Open in the REPL</a></p>`);
      continue;
    }
    const t = b.text;
    let m;
    if (!t.trim()) flush();
    else if ((m = t.match(/^(#{1,3}) (.*)$/))) {
      flush();
      const n = m[1].length;
      if (n === 1 && title === null) title = m[2].replace(/`/g, "");
      html.push(`<h${n} id="${slug(m[2])}">${inline(m[2])}</h${n}>`);
    } else if ((m = t.match(/^\s*(-|\d+\.) (.*)$/))) {
      const kind = m[1] === "-" ? "ul" : "ol";
      if (para.length || list !== kind) flush();
      if (!list) html.push(`<${(list = kind)}>`);
      html.push(`<li>${inline(m[2])}</li>`);
    } else if (list && /^\s+\S/.test(t)) {
      html[html.length - 1] = html[html.length - 1].replace(/<\/li>$/, ` ${inline(t.trim())}</li>`);
    } else if ((m = t.match(/^> ?(.*)$/))) {
      flush();
      html.push(`<p class="note">${inline(m[1])}</p>`);
    } else if (t.startsWith("|")) {
      const cells = t.slice(1, t.trimEnd().endsWith("|") ? t.trimEnd().length - 1 : undefined).split("|").map((c) => inline(c.trim()));
      if (cells.every((c) => /^-+$/.test(c))) continue;
      if (!table) {
        flush();
        table = [`<table><thead><tr>${cells.map((c) => `<th>${c}</th>`).join("")}</tr></thead><tbody>`];
      } else table.push(`<tr>${cells.map((c) => `<td>${c}</td>`).join("")}</tr>`);
    } else {
      if (list || table) flush();
      para.push(t.trim());
    }
  }
  flush();
  return { title: title ?? "kiln", body: html.join("\n") };
}
