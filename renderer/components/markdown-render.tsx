// Agent output as Markdown (GitHub flavour, single newlines kept as line breaks). Raw
// HTML in it is dropped, never rendered; links open outside the app (Electron hands
// http(s) links to the system browser); code blocks have a Copy button. The parser is
// the largest part of the page's code, so this module is loaded on demand (markdown.tsx).
import { type ReactNode } from 'react';
import { flushSync } from 'react-dom';
import { createRoot } from 'react-dom/client';
import ReactMarkdown, { type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { remarkLineBreaks } from './remark-line-breaks';
import { CopyButton } from './ui';

const remarkPlugins = [remarkGfm, remarkLineBreaks];

interface HastNode {
  type: string;
  value?: string;
  children?: HastNode[];
}

/** The text of a rendered element, as it was written. */
function textOf(node: HastNode | undefined): string {
  if (!node) return '';
  if (node.type === 'text') return node.value ?? '';
  return (node.children ?? []).map(textOf).join('');
}

function CodeBlock({ code, children }: { code: string; children: ReactNode }) {
  return (
    <div className="md-code">
      <pre>{children}</pre>
      <div className="md-code-copy">
        <CopyButton text={code.replace(/\n$/, '')} label="Copy code" />
      </div>
    </div>
  );
}

const components: Components = {
  a: ({ href, children }) => (
    <a href={href} target="_blank" rel="noreferrer noopener">
      {children}
    </a>
  ),
  // Images would load from anywhere; show their text and address instead.
  img: ({ alt, src }) => (
    <span className="md-image">
      [{alt || 'image'}
      {typeof src === 'string' ? `: ${src}` : ''}]
    </span>
  ),
  table: ({ children }) => (
    <div className="md-table">
      <table>{children}</table>
    </div>
  ),
  pre: ({ node, children }) => <CodeBlock code={textOf(node)}>{children}</CodeBlock>,
};

export function MarkdownBody({ text }: { text: string }) {
  return (
    <ReactMarkdown remarkPlugins={remarkPlugins} components={components} skipHtml>
      {text}
    </ReactMarkdown>
  );
}

/** A little of each construct the parser has. */
const WARM_UP =
  '# a\n\n**b** _c_ `d` [e](https://example.com) ~f~\n\n- g\n1. h\n\n> i\n\n| j | k |\n| - | - |\n| l | m |\n\n```\nn\n```';

/**
 * Renders a little Markdown once, off screen: the first conversation a person opens then
 * costs its own Markdown, not the parser's first run (20–40 ms here, most of it compiling
 * the parser).
 */
export function warmUp(): void {
  const root = createRoot(document.createElement('div'));
  flushSync(() => root.render(<MarkdownBody text={WARM_UP} />));
  root.unmount();
}
