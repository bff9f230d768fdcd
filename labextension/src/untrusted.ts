/**
 * Untrusted text (file names, command lines, model text) shown on one line: the panel's
 * twin of mercury_nb/contract/untrusted.py, so a name cannot draw a line of its own.
 */

// C0 and C1 controls (newlines and ESC included), DEL, the line and paragraph separators,
// and the marks that reorder or hide text (bidi embeddings, overrides, isolates, BOM).
const UNSAFE =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const ESCAPES: { [ch: string]: string } = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const NAME_START = /^[\p{L}\p{N}_./~-]/u;
const NEEDS_QUOTES = /["'`]|\s$/;

function escape(ch: string): string {
  if (ESCAPES[ch]) {
    return ESCAPES[ch];
  }
  const code = ch.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` on one line: lone surrogates replaced, controls and line breaks escaped. */
export function oneLine(text: string): string {
  return text.replace(LONE_SURROGATE, '\ufffd').replace(UNSAFE, escape);
}

/** A name as shown: on one line, and quoted when it could pass for the panel's own words. */
export function shownName(name: string): string {
  const line = oneLine(name);
  if (line && line === name && NAME_START.test(line) && !NEEDS_QUOTES.test(line)) {
    return line;
  }
  return '"' + line.replace(/"/g, '\\"') + '"';
}
