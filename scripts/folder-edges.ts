// Import edges between the parts of main/ — each folder (main/engine/, main/store/, …)
// and each file directly under main/ (main/installation.ts, …) — read from the
// TypeScript sources. Tests (*.test.ts) and the test kits are left out: they may reach
// anywhere to set a scene, and production code may not import them (eslint.config.js).
// Type-only imports, re-exports and import() count: a cycle through types is still a
// cycle a reader has to follow.
// e2e/folder-layers.test.ts fails on any cycle; run this to see the edges and why:
//   npx tsx scripts/folder-edges.ts            every edge, with the files behind it
//   npx tsx scripts/folder-edges.ts --cycles   only the cycles
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/** One import of one file of `from` by one file of `to` (paths relative to the repository). */
export interface ImportUse {
  file: string;
  imports: string;
}

/** part → part it imports → the imports behind that edge. */
export type FolderEdges = Map<string, Map<string, ImportUse[]>>;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...sourceFiles(full));
    else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

/** The module specifiers a file imports, re-exports or loads with import(). */
function specifiers(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) out.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      out.push(node.arguments[0].text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const literal = node.argument.literal;
      if (ts.isStringLiteral(literal)) out.push(literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** The file a relative specifier names, or undefined for packages and node: modules. */
function resolve(fromFile: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(fromFile), specifier.replace(/\.js$/, ''));
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** The part of main/ a file belongs to: `engine` for main/engine/…, `installation.ts` for main/installation.ts. */
export function partOf(file: string, root = repoRoot): string | undefined {
  const relative = path.relative(path.join(root, 'main'), file);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return undefined;
  return relative.split(path.sep)[0];
}

/** Every part of main/ that holds production code, test kits left out. */
export function parts(root = repoRoot): string[] {
  const found = sourceFiles(path.join(root, 'main')).map((file) => partOf(file, root)!);
  return [...new Set(found)].sort();
}

export function folderEdges(root = repoRoot): FolderEdges {
  const edges: FolderEdges = new Map();
  for (const file of sourceFiles(path.join(root, 'main'))) {
    const from = partOf(file, root)!;
    for (const specifier of specifiers(file)) {
      const target = resolve(file, specifier);
      const to = target === undefined ? undefined : partOf(target, root);
      if (to === undefined || to === from) continue;
      const byTarget = edges.get(from) ?? new Map<string, ImportUse[]>();
      edges.set(from, byTarget);
      const uses = byTarget.get(to) ?? [];
      byTarget.set(to, uses);
      const use = { file: path.relative(root, file), imports: path.relative(root, target!) };
      if (!uses.some((seen) => seen.file === use.file && seen.imports === use.imports)) uses.push(use);
    }
  }
  return edges;
}

/**
 * The groups of parts that import each other, directly or round about (the strongly
 * connected components with more than one part, by Tarjan's algorithm), each sorted.
 */
export function cycles(edges: FolderEdges): string[][] {
  const parts = new Set<string>([...edges.keys(), ...[...edges.values()].flatMap((to) => [...to.keys()])]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  let next = 0;
  const connect = (part: string): void => {
    index.set(part, next);
    low.set(part, next);
    next++;
    stack.push(part);
    onStack.add(part);
    for (const to of edges.get(part)?.keys() ?? []) {
      if (!index.has(to)) {
        connect(to);
        low.set(part, Math.min(low.get(part)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(part, Math.min(low.get(part)!, index.get(to)!));
      }
    }
    if (low.get(part) === index.get(part)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== part);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const part of [...parts].sort()) if (!index.has(part)) connect(part);
  return groups.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** The shortest way from `from` back to `to` over edges inside `group`, or undefined. */
function shortestPath(edges: FolderEdges, group: readonly string[], from: string, to: string): string[] | undefined {
  const previous = new Map<string, string>([[from, from]]);
  const queue = [from];
  while (queue.length > 0) {
    const part = queue.shift()!;
    if (part === to) {
      const path = [to];
      while (path[0] !== from) path.unshift(previous.get(path[0]!)!);
      return path;
    }
    for (const next of [...(edges.get(part)?.keys() ?? [])].sort()) {
      if (group.includes(next) && !previous.has(next)) {
        previous.set(next, part);
        queue.push(next);
      }
    }
  }
  return undefined;
}

/**
 * The cycles as a reader can act on them: for each edge inside a group that imports
 * itself round about, the shortest cycle through it (`a → b → a`), each once, with the
 * files behind each of its edges.
 */
export function describeCycles(edges: FolderEdges): string[] {
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const group of cycles(edges)) {
    for (const from of group) {
      for (const to of [...(edges.get(from)?.keys() ?? [])].sort()) {
        if (!group.includes(to)) continue;
        const cycle = [from, ...shortestPath(edges, group, to, from)!];
        const smallest = cycle.slice(0, -1).reduce((a, b) => (a < b ? a : b));
        const start = cycle.indexOf(smallest);
        const key = [...cycle.slice(start, -1), ...cycle.slice(0, start), smallest].join(' → ');
        if (seen.has(key)) continue;
        seen.add(key);
        lines.push(`cycle: ${key}`);
        for (let i = 0; i + 1 < cycle.length; i++) {
          const uses = edges.get(cycle[i]!)!.get(cycle[i + 1]!)!;
          const shown = uses.slice(0, 3).map((use) => `${use.file} → ${use.imports}`);
          if (uses.length > 3) shown.push(`${uses.length - 3} more`);
          lines.push(`  ${cycle[i]} → ${cycle[i + 1]}: ${shown.join('; ')}`);
        }
      }
    }
  }
  return lines;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const edges = folderEdges();
  if (!process.argv.includes('--cycles')) {
    for (const [from, byTarget] of [...edges].sort(([a], [b]) => a.localeCompare(b))) {
      for (const [to, uses] of [...byTarget].sort(([a], [b]) => a.localeCompare(b))) {
        console.log(`${from} → ${to} (${uses.length}): ${uses.map((use) => use.file).join(', ')}`);
      }
    }
  }
  const found = describeCycles(edges);
  console.log(found.length === 0 ? 'no cycles' : found.join('\n'));
  process.exitCode = found.length === 0 ? 0 : 1;
}
