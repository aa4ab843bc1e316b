/**
 * Writes a filtered SVG tree back as text, in one canonical shape: the SVG namespace is the
 * default namespace declared once on the root, `xlink` is the only other prefix (plus the
 * predeclared `xml`), element names come from the sanitizer's allowlist, and every attribute
 * value and text node is escaped. Whatever parser reads the output builds the tree we wrote.
 */
import { XML_NAMESPACE, type XmlElement, type XmlNode } from './xml-parse.ts';

/** The SVG namespace. */
export const SVG_NAMESPACE = 'http://www.w3.org/2000/svg';
/** The XLink namespace (`xlink:href` of SVG 1.1). */
export const XLINK_NAMESPACE = 'http://www.w3.org/1999/xlink';

const ROOT_DECLARATIONS = ` xmlns="${SVG_NAMESPACE}" xmlns:xlink="${XLINK_NAMESPACE}"`;

/** The document for a sanitized tree whose root is `<svg>`. */
export function serializeSvg(root: XmlElement): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>\n'];
  writeElement(root, out, true);
  return out.join('');
}

function writeElement(element: XmlElement, out: string[], isRoot: boolean): void {
  out.push('<', element.local, isRoot ? ROOT_DECLARATIONS : '');
  for (const attribute of element.attributes) {
    const prefix = attribute.ns === XLINK_NAMESPACE ? 'xlink:' : attribute.ns === XML_NAMESPACE ? 'xml:' : '';
    out.push(' ', prefix, attribute.local, '="', escapeAttribute(attribute.value), '"');
  }
  if (element.children.length === 0) {
    out.push('/>');
    return;
  }
  out.push('>');
  for (const child of element.children) writeNode(child, out);
  out.push('</', element.local, '>');
}

function writeNode(node: XmlNode, out: string[]): void {
  if (node.kind === 'text') out.push(escapeText(node.text));
  else writeElement(node, out, false);
}

function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Tabs and line ends as character references: literal ones would be normalized to spaces on re-reading. */
function escapeAttribute(value: string): string {
  return escapeText(value).replace(/"/g, '&quot;').replace(/\t/g, '&#9;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;');
}
