// What people type, and the FTS5 query it becomes: never an operator, never a syntax error.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MAX_TERMS, matchExpression } from './match-expression';

const cases: Array<[typed: string, expression: string | null]> = [
  ['deploy', '"deploy"*'],
  ['  deploy   friday ', '"deploy"* "friday"*'],
  ['"quick brown" fox', '"quick brown" "fox"*'],
  ['"unclosed phrase', '"unclosed phrase"'],
  ['AND OR NOT', '"AND"* "OR"* "NOT"*'],
  ['NEAR(a b)', '"NEAR(a"* "b)"*'],
  ['title:report', '"title:report"*'],
  ['a*b^c', '"a*b^c"*'],
  ['a b', '"a" "b"'],
  ['it"s', '"it"* "s"'],
  ['!!! ??? ---', null],
  ['"" ""', null],
  ['café', '"café"*'],
  ['日本語', '"日本語"*'],
  ['tab\there\u0000nul', '"tab"* "here"* "nul"*'],
  ['xy '.repeat(40), Array(MAX_TERMS).fill('"xy"*').join(' ')],
];

describe('matchExpression', () => {
  it.each(cases)('%j → %s', (typed, expression) => {
    expect(matchExpression(typed)).toBe(expression);
  });

  it('is valid FTS5 for every case, and for hostile input', () => {
    const db = new Database(':memory:');
    db.exec("CREATE VIRTUAL TABLE t USING fts5(body); INSERT INTO t (body) VALUES ('the quick brown fox')");
    const hostile = ['"', '""', '"""', '*', '(', ')', 'a OR', 'NOT', '^', ':', '-', '+', '{a b}', 'col:x', '\u0000x'];
    for (const typed of [...cases.map(([t]) => t), ...hostile]) {
      const expression = matchExpression(typed);
      if (expression !== null)
        expect(() => db.prepare('SELECT * FROM t WHERE t MATCH ?').all(expression)).not.toThrow();
    }
    expect(db.prepare('SELECT body FROM t WHERE t MATCH ?').all(matchExpression('qui bro'))).toHaveLength(1);
    expect(db.prepare('SELECT body FROM t WHERE t MATCH ?').all(matchExpression('"brown quick"'))).toHaveLength(0);
    db.close();
  });
});
