/**
 * The "use bomb" guard: how many nodes an SVG becomes once every `<use>` (and every `url(#id)`
 * reference in an attribute) is counted with its target, as a renderer expands them. Ten nested
 * levels of ten `<use>` each are a few hundred bytes and 10^10 nodes; the count is memoized per
 * element, so the check itself is linear in the document. (`url(#id)` inside `<style>` rules is
 * not counted: CSS applies to elements the walk already counts, and paint servers are rendered
 * once per use, not expanded into the tree.)
 */
import { fragmentId, urlArguments } from './svg-references.ts';
import type { XmlElement } from './xml-parse.ts';

/** Outcome of {@link checkReferenceExpansion}. */
export type ExpansionCheck = 'ok' | 'too-complex' | 'reference-cycle';

/** Longest chain of references followed (target of a target of ...); deeper chains are refused. */
const MAX_REFERENCE_DEPTH = 32;

/** Signals the outcome out of the recursive walk. */
class ExpansionRefused extends Error {
  constructor(readonly outcome: Exclude<ExpansionCheck, 'ok'>) {
    super(outcome);
  }
}

/** Whether `root` expands to at most `maxNodes` nodes without reference cycles. */
export function checkReferenceExpansion(root: XmlElement, maxNodes: number): ExpansionCheck {
  const byId = new Map<string, XmlElement[]>();
  collectIds(root, byId);
  const memo = new Map<XmlElement, number>();
  const active = new Set<XmlElement>();

  const cost = (element: XmlElement, referenceDepth: number): number => {
    const known = memo.get(element);
    if (known !== undefined) return known;
    if (active.has(element)) throw new ExpansionRefused('reference-cycle');
    if (referenceDepth > MAX_REFERENCE_DEPTH) throw new ExpansionRefused('too-complex');
    active.add(element);
    let total = 1;
    for (const child of element.children) if (child.kind === 'element') total += cost(child, referenceDepth);
    for (const id of referencedIds(element)) {
      // Duplicate ids: count the costliest candidate, whichever one the renderer picks.
      for (const target of byId.get(id) ?? []) total += cost(target, referenceDepth + 1);
    }
    active.delete(element);
    if (total > maxNodes) throw new ExpansionRefused('too-complex');
    memo.set(element, total);
    return total;
  };

  try {
    cost(root, 0);
    return 'ok';
  } catch (err) {
    if (err instanceof ExpansionRefused) return err.outcome;
    throw err;
  }
}

function collectIds(element: XmlElement, byId: Map<string, XmlElement[]>): void {
  const id = element.attributes.find((a) => a.ns === null && a.local === 'id')?.value;
  if (id !== undefined) {
    const same = byId.get(id);
    if (same) same.push(element);
    else byId.set(id, [element]);
  }
  for (const child of element.children) if (child.kind === 'element') collectIds(child, byId);
}

/** Ids this element points at: its `href` fragment and every `url(#id)` in its attributes. */
function referencedIds(element: XmlElement): string[] {
  const ids: string[] = [];
  for (const attribute of element.attributes) {
    if (attribute.local === 'href') {
      const id = fragmentId(attribute.value);
      if (id !== undefined) ids.push(id);
    } else {
      for (const arg of urlArguments(attribute.value) ?? []) {
        const id = fragmentId(arg);
        if (id !== undefined) ids.push(id);
      }
    }
  }
  return ids;
}
