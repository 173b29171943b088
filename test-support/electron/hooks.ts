// Module hooks (Node's module.register): `electron` resolves to the stand-in next to
// this file. Everything else resolves as usual.
const standIn = new URL('./index.js', import.meta.url).href;

interface ResolveContext {
  conditions: string[];
  parentURL?: string;
}
type NextResolve = (specifier: string, context: ResolveContext) => Promise<{ url: string }>;

export function resolve(specifier: string, context: ResolveContext, nextResolve: NextResolve) {
  if (specifier === 'electron') return Promise.resolve({ url: standIn, format: 'module', shortCircuit: true });
  return nextResolve(specifier, context);
}
