// Agent output as people read it: single newlines are line breaks, code keeps its own,
// code blocks carry a Copy button, raw HTML is dropped; help texts show code as code.
import { renderToStaticMarkup } from 'react-dom/server';
import { beforeAll, describe, expect, it } from 'vitest';
import { Markdown, markdownReady } from './markdown';
import { TextWithCode } from './text-with-code';

const html = (text: string) => renderToStaticMarkup(<Markdown text={text} />);

describe('Markdown before its parser has loaded', () => {
  it('shows the text as written', () => {
    expect(html('**bold** and\na line')).toBe(
      '<div class="markdown"><p class="markdown-plain">**bold** and\na line</p></div>',
    );
  });
});

describe('Markdown', () => {
  beforeAll(() => markdownReady());

  it('breaks the line at a single newline, and keeps paragraphs', () => {
    expect(html('first line\nsecond line')).toMatch(/<p>first line<br\/>\s*second line<\/p>/);
    expect(html('one\n\ntwo')).toMatch(/<p>one<\/p>\s*<p>two<\/p>/);
    expect(html('- a\n  still a')).toMatch(/a<br\/>\s*still a/);
  });

  it('leaves code as it was written, with a Copy button on blocks', () => {
    const block = html('```\nnpm test\nnpm run lint\n```');
    expect(block).toContain('<code>npm test\nnpm run lint\n</code>');
    expect(block).not.toContain('<br/>');
    expect(block).toContain('Copy code');
    expect(html('run `a\nb` now')).not.toContain('<br/>');
  });

  it('drops raw HTML', () => {
    expect(html('<script>alert(1)</script>hello')).not.toContain('<script');
  });
});

describe('TextWithCode', () => {
  it.each([
    ['could not start `claude`: no such program', 'could not start <code>claude</code>: no such program'],
    ['use `parley reply` or `parley report`', 'use <code>parley reply</code> or <code>parley report</code>'],
    ['no code here', 'no code here'],
    ['a lone ` stays', 'a lone ` stays'],
  ])('%s', (text, expected) => {
    expect(renderToStaticMarkup(<TextWithCode text={text} />)).toBe(expected);
  });
});
