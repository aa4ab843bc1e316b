/**
 * A strict, non-validating, namespace-aware parser for the XML subset SVG files use, written for
 * the SVG sanitizer: it builds a tree the sanitizer filters and re-serializes, so whatever
 * reaches the renderer was produced by our serializer from this tree, never passed through.
 *
 * Deliberately smaller than XML 1.0, and refusing (never guessing) outside it: no DOCTYPE (so no
 * entity declarations: no XXE, no billion laughs), only the five predefined entities and numeric
 * character references, no unbound or redeclared-reserved prefixes, no duplicate attributes, no
 * characters outside XML's `Char`, bounded depth and node count. Comments and processing
 * instructions are dropped. Line ends are normalized (`\r\n`, `\r` -> `\n`) as XML requires.
 */

/** The XML namespace, bound to the `xml` prefix by definition. */
export const XML_NAMESPACE = 'http://www.w3.org/XML/1998/namespace';
const XMLNS_NAMESPACE = 'http://www.w3.org/2000/xmlns/';

/** An attribute after namespace resolution (namespace declarations are not attributes). */
export interface XmlAttribute {
  readonly ns: string | null;
  readonly local: string;
  readonly value: string;
}

/** An element after namespace resolution. */
export interface XmlElement {
  readonly kind: 'element';
  readonly ns: string | null;
  readonly local: string;
  readonly attributes: readonly XmlAttribute[];
  readonly children: XmlNode[];
}

/** Character data (text and CDATA sections, entities decoded). */
export interface XmlText {
  readonly kind: 'text';
  readonly text: string;
}

/** A node of the parsed tree. */
export type XmlNode = XmlElement | XmlText;

/** Bounds on the parsed tree. */
export interface XmlLimits {
  /** Deepest element nesting accepted. */
  maxDepth: number;
  /** Most elements plus text nodes accepted. */
  maxNodes: number;
}

/** The document is not in the accepted XML subset; `reason` is a short stable tag. */
export class XmlRejectedError extends Error {
  readonly reason: string;
  readonly offset: number;
  constructor(reason: string, message: string, offset: number) {
    super(`${message} (at character ${offset})`);
    this.name = 'XmlRejectedError';
    this.reason = reason;
    this.offset = offset;
  }
}

const NAME_START = 'A-Za-z_:\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u02FF\\u0370-\\u037D\\u037F-\\u1FFF\\u200C\\u200D\\u2070-\\u218F\\u2C00-\\u2FEF\\u3001-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFFD';
const NAME_REST = `${NAME_START}\\-.0-9\\u00B7\\u0300-\\u036F\\u203F-\\u2040`;
const NAME = new RegExp(`[${NAME_START}][${NAME_REST}]*`, 'y');
const SPACE = /[ \t\n]*/y;
/** Anything outside XML 1.0's `Char` production (control characters, lone surrogates, U+FFFE/F). */
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const PREDEFINED: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
const ENCODINGS = new Set(['utf-8', 'utf8', 'us-ascii', 'ascii']);

interface RawAttribute {
  qname: string;
  value: string;
}

/** Parser state: the source, a cursor and the open elements with their namespace scopes. */
class Cursor {
  pos = 0;
  nodes = 0;
  constructor(
    readonly src: string,
    readonly limits: XmlLimits,
  ) {}

  fail(reason: string, message: string): never {
    throw new XmlRejectedError(reason, message, this.pos);
  }
  startsWith(token: string): boolean {
    return this.src.startsWith(token, this.pos);
  }
  skipSpace(): boolean {
    SPACE.lastIndex = this.pos;
    SPACE.test(this.src);
    const moved = SPACE.lastIndex > this.pos;
    this.pos = SPACE.lastIndex;
    return moved;
  }
  name(): string {
    NAME.lastIndex = this.pos;
    const match = NAME.exec(this.src);
    if (!match) this.fail('syntax', 'expected a name');
    this.pos = NAME.lastIndex;
    return match[0];
  }
  expect(token: string): void {
    if (!this.startsWith(token)) this.fail('syntax', `expected "${token}"`);
    this.pos += token.length;
  }
  /** Text up to (not including) `token`, moving past the token. */
  until(token: string, what: string): string {
    const end = this.src.indexOf(token, this.pos);
    if (end < 0) this.fail('syntax', `unterminated ${what}`);
    const text = this.src.slice(this.pos, end);
    this.pos = end + token.length;
    return text;
  }
  countNode(): void {
    if (++this.nodes > this.limits.maxNodes) this.fail('too-many-nodes', `more than ${this.limits.maxNodes} nodes`);
  }
}

/**
 * Parses a whole document into its root element. Throws {@link XmlRejectedError} for anything
 * malformed or outside the accepted subset (see the module comment).
 */
export function parseXml(source: string, limits: XmlLimits): XmlElement {
  const match = NOT_XML_CHAR.exec(source);
  if (match) throw new XmlRejectedError('invalid-char', `character U+${match[0].codePointAt(0)?.toString(16)} is not allowed in XML`, match.index);
  const cursor = new Cursor(source.replace(/\r\n?/g, '\n'), limits);
  parseDeclaration(cursor);
  skipMisc(cursor);
  if (cursor.startsWith('<!')) cursor.fail('doctype', 'DOCTYPE and other declarations are not accepted');
  if (!cursor.startsWith('<')) cursor.fail('syntax', 'expected the root element');
  const root = parseElement(cursor, new Map([['xml', XML_NAMESPACE]]), 1);
  skipMisc(cursor);
  if (cursor.pos < cursor.src.length) cursor.fail('syntax', 'content after the root element');
  return root;
}

/** The optional `<?xml ...?>` declaration; only UTF-8 (or its ASCII subset) is accepted. */
function parseDeclaration(cursor: Cursor): void {
  // Leading whitespace is tolerated (XML forbids it, browsers refuse it, nothing depends on it).
  const start = /^[ \t\n]*<\?xml[ \t\n]/.exec(cursor.src);
  if (!start) return;
  cursor.pos = start[0].length;
  const body = cursor.until('?>', 'XML declaration');
  const encoding = /encoding[ \t\n]*=[ \t\n]*["']([^"']*)["']/.exec(body)?.[1];
  if (encoding !== undefined && !ENCODINGS.has(encoding.toLowerCase())) cursor.fail('encoding', `encoding ${encoding} is not accepted (UTF-8 only)`);
}

/** Whitespace, comments and processing instructions between top-level constructs. */
function skipMisc(cursor: Cursor): void {
  for (;;) {
    cursor.skipSpace();
    if (cursor.startsWith('<!--')) skipComment(cursor);
    else if (cursor.startsWith('<?')) skipInstruction(cursor);
    else return;
  }
}

function skipComment(cursor: Cursor): void {
  cursor.pos += 4;
  const body = cursor.until('-->', 'comment');
  if (body.includes('--') || body.endsWith('-')) cursor.fail('syntax', '"--" inside a comment');
}

/** Processing instructions are dropped (`<?xml-stylesheet?>` would be an external reference). */
function skipInstruction(cursor: Cursor): void {
  cursor.pos += 2;
  const target = cursor.name();
  if (target.toLowerCase() === 'xml') cursor.fail('syntax', 'XML declaration not at the start');
  cursor.until('?>', 'processing instruction');
}

/**
 * One element and everything inside it. Recursion depth is bounded by `limits.maxDepth`, which
 * keeps the call stack (here and in the sanitizer's tree walks) small.
 */
function parseElement(cursor: Cursor, scope: ReadonlyMap<string, string>, depth: number): XmlElement {
  if (depth > cursor.limits.maxDepth) cursor.fail('too-deep', `elements nested deeper than ${cursor.limits.maxDepth}`);
  cursor.countNode();
  cursor.expect('<');
  const qname = cursor.name();
  const raw = parseAttributes(cursor);
  const inner = declareNamespaces(cursor, scope, raw);
  const element: XmlElement = {
    kind: 'element',
    ...resolveName(cursor, inner, qname, true),
    attributes: resolveAttributes(cursor, inner, raw),
    children: [],
  };
  if (cursor.startsWith('/>')) {
    cursor.pos += 2;
    return element;
  }
  cursor.expect('>');
  parseContent(cursor, inner, depth, element.children);
  cursor.expect('</');
  if (cursor.name() !== qname) cursor.fail('syntax', `end tag does not match <${qname}>`);
  cursor.skipSpace();
  cursor.expect('>');
  return element;
}

/** Children until the parent's end tag. */
function parseContent(cursor: Cursor, scope: ReadonlyMap<string, string>, depth: number, children: XmlNode[]): void {
  for (;;) {
    if (cursor.pos >= cursor.src.length) cursor.fail('syntax', 'unexpected end of document');
    if (cursor.startsWith('</')) return;
    if (cursor.startsWith('<!--')) skipComment(cursor);
    else if (cursor.startsWith('<![CDATA[')) {
      cursor.pos += 9;
      pushText(cursor, children, cursor.until(']]>', 'CDATA section'));
    } else if (cursor.startsWith('<?')) skipInstruction(cursor);
    else if (cursor.startsWith('<!')) cursor.fail('doctype', 'declarations are not accepted inside elements');
    else if (cursor.startsWith('<')) children.push(parseElement(cursor, scope, depth + 1));
    else pushText(cursor, children, parseCharData(cursor));
  }
}

function pushText(cursor: Cursor, children: XmlNode[], text: string): void {
  if (text === '') return;
  const last = children.at(-1);
  // Adjacent text and CDATA are one run of character data, as every XML parser reports it.
  if (last?.kind === 'text') children[children.length - 1] = { kind: 'text', text: last.text + text };
  else {
    cursor.countNode();
    children.push({ kind: 'text', text });
  }
}

function parseCharData(cursor: Cursor): string {
  const end = cursor.src.indexOf('<', cursor.pos);
  const raw = cursor.src.slice(cursor.pos, end < 0 ? cursor.src.length : end);
  if (raw.includes(']]>')) cursor.fail('syntax', '"]]>" in character data');
  const text = decodeReferences(cursor, raw);
  cursor.pos += raw.length;
  return text;
}

/** Attributes of a start tag, raw (qualified names, values decoded and normalized). */
function parseAttributes(cursor: Cursor): RawAttribute[] {
  const attributes: RawAttribute[] = [];
  const names = new Set<string>(); // a Set: a tag with 100k attributes must not cost 10^10 comparisons
  for (;;) {
    const spaced = cursor.skipSpace();
    if (cursor.startsWith('>') || cursor.startsWith('/>')) return attributes;
    if (!spaced) cursor.fail('syntax', 'expected whitespace before an attribute');
    const qname = cursor.name();
    if (names.has(qname)) cursor.fail('syntax', `duplicate attribute ${qname}`);
    names.add(qname);
    cursor.skipSpace();
    cursor.expect('=');
    cursor.skipSpace();
    const quote = cursor.src[cursor.pos];
    if (quote !== '"' && quote !== "'") cursor.fail('syntax', 'attribute value must be quoted');
    cursor.pos += 1;
    const raw = cursor.until(quote, 'attribute value');
    if (raw.includes('<')) cursor.fail('syntax', '"<" in an attribute value');
    // Attribute-value normalization: literal whitespace becomes a space; character references stay.
    attributes.push({ qname, value: decodeReferences(cursor, raw.replace(/[\t\n]/g, ' ')) });
  }
}

/** Decodes the five predefined entities and numeric character references; anything else is refused. */
function decodeReferences(cursor: Cursor, raw: string): string {
  if (!raw.includes('&')) return raw;
  return raw.replace(/&([^;&]*)(;?)/g, (_all, name: string, semicolon: string) => {
    if (semicolon !== ';') cursor.fail('syntax', 'bare "&" (write &amp;)');
    const predefined = PREDEFINED[name];
    if (predefined !== undefined) return predefined;
    const numeric = /^#(?:x([0-9a-fA-F]{1,6})|([0-9]{1,7}))$/.exec(name);
    if (!numeric) cursor.fail('entity', `undefined entity &${name};`);
    const codePoint = numeric[1] === undefined ? Number(numeric[2]) : parseInt(numeric[1], 16);
    const char = codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : '';
    if (char === '' || NOT_XML_CHAR.test(char)) cursor.fail('invalid-char', `character reference &${name}; is not an XML character`);
    return char;
  });
}

/** The namespace scope inside an element: its parent's, plus its own `xmlns` declarations. */
function declareNamespaces(cursor: Cursor, scope: ReadonlyMap<string, string>, raw: readonly RawAttribute[]): ReadonlyMap<string, string> {
  const declarations = raw.filter((a) => a.qname === 'xmlns' || a.qname.startsWith('xmlns:'));
  if (declarations.length === 0) return scope;
  const inner = new Map(scope);
  for (const { qname, value } of declarations) {
    const prefix = qname === 'xmlns' ? '' : qname.slice(6);
    if (prefix === 'xmlns' || (prefix === 'xml') !== (value === XML_NAMESPACE) || value === XMLNS_NAMESPACE) {
      cursor.fail('namespace', `reserved namespace binding ${qname}="${value}"`);
    }
    if (prefix !== '' && value === '') cursor.fail('namespace', `empty namespace for prefix ${prefix}`);
    if (prefix === '' && value === '') inner.delete('');
    else inner.set(prefix, value);
  }
  return inner;
}

/** Splits a qualified name and resolves its prefix; unprefixed attributes are in no namespace. */
function resolveName(cursor: Cursor, scope: ReadonlyMap<string, string>, qname: string, isElement: boolean): { ns: string | null; local: string } {
  const parts = qname.split(':');
  if (parts.length > 2 || parts.some((p) => p === '')) cursor.fail('namespace', `malformed qualified name ${qname}`);
  if (parts.length === 1) return { ns: isElement ? (scope.get('') ?? null) : null, local: qname };
  const [prefix, local] = parts as [string, string];
  const ns = scope.get(prefix);
  if (ns === undefined) cursor.fail('namespace', `unbound prefix ${prefix}`);
  return { ns, local };
}

/** The non-declaration attributes with resolved names; two with one expanded name are refused. */
function resolveAttributes(cursor: Cursor, scope: ReadonlyMap<string, string>, raw: readonly RawAttribute[]): XmlAttribute[] {
  const seen = new Set<string>();
  const attributes: XmlAttribute[] = [];
  for (const { qname, value } of raw) {
    if (qname === 'xmlns' || qname.startsWith('xmlns:')) continue;
    const { ns, local } = resolveName(cursor, scope, qname, false);
    const expanded = `${ns ?? ''}\u0000${local}`;
    if (seen.has(expanded)) cursor.fail('syntax', `duplicate attribute ${qname}`);
    seen.add(expanded);
    attributes.push({ ns, local, value });
  }
  return attributes;
}
