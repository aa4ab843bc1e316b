/**
 * `run: "convert {{input.src}} 'out file.png'"` as an argv list, without a shell: words split at
 * blanks, `'...'` quotes anything literally, `"..."` quotes with `\"` and `\\` escapes, `\` outside
 * quotes escapes the next character. Nothing is expanded (no `$VAR`, globs, `~`, `;`, `|`,
 * redirections): those characters are plain text. A `{{...}}` template stays inside its word even
 * when it holds blanks; its value is filled in later, after splitting, so it can never add words.
 */

/** The words of `text`, or the problem (an unterminated quote) with its offset. */
export function splitArgv(text: string): { argv: string[] } | { problem: string; offset: number } {
  const argv: string[] = [];
  let word: string | null = null;
  let i = 0;
  const append = (s: string): void => {
    word = (word ?? '') + s;
  };
  while (i < text.length) {
    const c = text[i] as string;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      if (word !== null) argv.push(word);
      word = null;
      i += 1;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return { problem: 'unterminated single quote', offset: i };
      append(text.slice(i + 1, end));
      i = end + 1;
    } else if (c === '"') {
      const closed = readDoubleQuoted(text, i + 1);
      if (closed === null) return { problem: 'unterminated double quote', offset: i };
      append(closed.value);
      i = closed.end;
    } else if (c === '\\' && i + 1 < text.length) {
      append(text[i + 1] as string);
      i += 2;
    } else if (text.startsWith('{{', i)) {
      const end = text.indexOf('}}', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      append(text.slice(i, stop));
      i = stop;
    } else {
      append(c);
      i += 1;
    }
  }
  if (word !== null) argv.push(word);
  return { argv };
}

/** The body of a `"..."` starting at `from` (after the quote) and the index after the closing quote. */
function readDoubleQuoted(text: string, from: number): { value: string; end: number } | null {
  let value = '';
  for (let i = from; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '"') return { value, end: i + 1 };
    if (c === '\\' && (text[i + 1] === '"' || text[i + 1] === '\\')) {
      value += text[i + 1];
      i += 1;
    } else {
      value += c;
    }
  }
  return null;
}
