import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseXml, XML_NAMESPACE, XmlRejectedError, type XmlElement } from '../../../src/pipelines/thumbnails/media/xml-parse.ts';

const LIMITS = { maxDepth: 16, maxNodes: 1000 };

function rejects(source: string, reason: string, limits = LIMITS): void {
  assert.throws(
    () => parseXml(source, limits),
    (err: unknown) => err instanceof XmlRejectedError && err.reason === reason,
    `${reason}: ${source}`,
  );
}

describe('parseXml', () => {
  test('builds a namespace-resolved tree with decoded text and attributes', () => {
    const root = parseXml(
      '<?xml version="1.0" encoding="UTF-8"?>\n<!-- c --><s:svg xmlns:s="urn:a" xmlns:x="urn:x" x:href="&#x23;a" b=\'1 &lt; 2\'><s:g>t&amp;u<![CDATA[<raw>]]></s:g><k xmlns="urn:k" xml:space="preserve"/></s:svg>',
      LIMITS,
    );
    assert.equal(root.ns, 'urn:a');
    assert.equal(root.local, 'svg');
    assert.deepEqual(root.attributes, [
      { ns: 'urn:x', local: 'href', value: '#a' },
      { ns: null, local: 'b', value: '1 < 2' },
    ]);
    const g = root.children[0] as XmlElement;
    assert.deepEqual(g.children, [{ kind: 'text', text: 't&u<raw>' }]);
    const k = root.children[1] as XmlElement;
    assert.equal(k.ns, 'urn:k');
    assert.deepEqual(k.attributes, [{ ns: XML_NAMESPACE, local: 'space', value: 'preserve' }]);
  });

  test('normalizes line ends and attribute whitespace like XML does', () => {
    const root = parseXml('<a v="x\r\ny\tz" w="&#10;">l1\r\nl2\rl3</a>', LIMITS);
    assert.deepEqual(root.attributes.map((a) => a.value), ['x y z', '\n']);
    assert.deepEqual(root.children, [{ kind: 'text', text: 'l1\nl2\nl3' }]);
  });

  test('refuses any DOCTYPE, with or without entity declarations', () => {
    rejects('<!DOCTYPE svg><svg/>', 'doctype');
    rejects('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]><svg>&lol2;</svg>', 'doctype');
    rejects('<!DOCTYPE svg [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><svg>&xxe;</svg>', 'doctype');
    rejects('<svg><!ENTITY x "y"></svg>', 'doctype');
  });

  test('refuses undefined entities and invalid character references', () => {
    rejects('<svg>&nbsp;</svg>', 'entity');
    rejects('<svg a="&foo;"/>', 'entity');
    rejects('<svg>&#0;</svg>', 'invalid-char');
    rejects('<svg>&#x110000;</svg>', 'invalid-char');
    rejects('<svg>a & b</svg>', 'syntax');
  });

  test('refuses malformed documents', () => {
    for (const source of ['', '<svg>', '<svg></g>', '<svg a=1/>', '<svg a="1" a="2"/>', '<svg/><svg/>', '<svg a="<"/>', 'text', '<svg>]]></svg>', '<svg><!-- a -- b --></svg>']) {
      assert.throws(() => parseXml(source, LIMITS), XmlRejectedError, source);
    }
  });

  test('refuses namespace errors', () => {
    rejects('<x:svg/>', 'namespace');
    rejects('<svg x:a="1"/>', 'namespace');
    rejects('<svg xmlns:p="urn:a" xmlns:q="urn:a" p:a="1" q:a="2"/>', 'syntax');
    rejects('<svg xmlns:xml="urn:not-xml"/>', 'namespace');
    rejects('<svg xmlns:p=""/>', 'namespace');
    rejects('<a:b:c/>', 'namespace');
  });

  test('refuses control characters, non-UTF-8 encodings and misplaced declarations', () => {
    rejects('<svg>\u0001</svg>', 'invalid-char');
    rejects('<?xml version="1.0" encoding="ISO-8859-1"?><svg/>', 'encoding');
    rejects('<svg/><?xml version="1.0"?>', 'syntax');
  });

  test('enforces the depth and node limits', () => {
    rejects('<a><a><a><a/></a></a></a>', 'too-deep', { maxDepth: 3, maxNodes: 100 });
    parseXml('<a><a><a/></a></a>', { maxDepth: 3, maxNodes: 100 });
    rejects(`<a>${'<b/>'.repeat(10)}</a>`, 'too-many-nodes', { maxDepth: 3, maxNodes: 10 });
  });
});
