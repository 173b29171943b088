// Agent output as Markdown (GitHub flavour, single newlines kept as line breaks). Raw
// HTML in it is dropped, never rendered; links open outside the app (Electron hands
// http(s) links to the system browser); code blocks have a Copy button.
import { memo, type ReactNode } from 'react';
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

export const Markdown = memo(function Markdown({ text, className }: { text: string; className?: string }) {
  return (
    <div className={`markdown${className ? ` ${className}` : ''}`}>
      <ReactMarkdown remarkPlugins={remarkPlugins} components={components} skipHtml>
        {text}
      </ReactMarkdown>
    </div>
  );
});
