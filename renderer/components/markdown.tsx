// Agent output as Markdown. The parser (markdown-render.tsx) is loaded when the page is
// first idle, or when the first Markdown is shown if that comes sooner, so the window's
// first paint does not wait for it; until it is there a text shows as written.
import { memo, useSyncExternalStore } from 'react';
import type * as MarkdownRender from './markdown-render';

type Renderer = typeof MarkdownRender;

let renderer: Renderer | null = null;
let loading: Promise<Renderer> | null = null;
const listeners = new Set<() => void>();

function load(): Promise<Renderer> {
  loading ??= import('./markdown-render').then((loaded) => {
    renderer = loaded;
    for (const listener of listeners) listener();
    return loaded;
  });
  return loading;
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (!renderer) void load();
  return () => listeners.delete(listener);
}

const snapshot = () => renderer;

export const Markdown = memo(function Markdown({ text, className }: { text: string; className?: string }) {
  const loaded = useSyncExternalStore(subscribe, snapshot, snapshot);
  return (
    <div className={`markdown${className ? ` ${className}` : ''}`}>
      {loaded ? <loaded.MarkdownBody text={text} /> : <p className="markdown-plain">{text}</p>}
    </div>
  );
});

/** Loads the parser and runs it once when the page is first idle (see markdown-render.tsx). */
export function warmMarkdown(): void {
  const run = () => void load().then((loaded) => loaded.warmUp());
  if (typeof requestIdleCallback === 'function') requestIdleCallback(run, { timeout: 2000 });
  else setTimeout(run, 500);
}

/** For tests and server rendering: the parser, loaded. */
export function markdownReady(): Promise<unknown> {
  return load();
}
