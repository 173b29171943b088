// Agent output as Markdown (GitHub flavour). Raw HTML in it is dropped, never rendered;
// links open outside the app (Electron hands http(s) links to the system browser).
import { memo } from 'react';
import ReactMarkdown, { type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';

const remarkPlugins = [remarkGfm];

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
