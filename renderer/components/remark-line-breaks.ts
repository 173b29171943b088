// A remark plugin: a single newline inside a paragraph is a line break, as agents and
// people mean it when they write one (CommonMark would join the lines).

interface MdNode {
  type: string;
  value?: string;
  children?: MdNode[];
}

/** Splits every text node at its newlines, with a `break` node at each. */
function splitAtNewlines(node: MdNode): void {
  if (!node.children) return;
  const children: MdNode[] = [];
  for (const child of node.children) {
    if (child.type === 'text' && child.value?.includes('\n')) {
      child.value.split(/\r?\n/).forEach((line, i) => {
        if (i > 0) children.push({ type: 'break' });
        if (line) children.push({ type: 'text', value: line });
      });
    } else {
      splitAtNewlines(child);
      children.push(child);
    }
  }
  node.children = children;
}

/** The plugin (`remarkPlugins={[remarkLineBreaks]}`); code keeps its newlines (its value is not a text node). */
export function remarkLineBreaks() {
  return (tree: MdNode) => splitAtNewlines(tree);
}
