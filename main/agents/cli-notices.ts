// What an agent's CLI adds to its answer of its own, where its output has no field that
// keeps it apart from the model's words. Such a notice is not the model's answer, and it
// may name the person's gateway or proxy: it must not reach a peer through the reply
// guard, nor the person's conversation as if the agent said it. The pattern is narrow on
// purpose, so that a model's own sentence that starts with "Warning:" stays.

/**
 * A paragraph Claude Code appends when its requests go through a gateway or a custom
 * base URL: "Warning: … your requests go through 127.0.0.1:PORT …" (and its other
 * gateway notices), up to the next blank line. Plain, it starts a line; in bold
 * ("**Warning:**", as claude-agent-acp passes it on) it may be glued to the answer.
 */
const GATEWAY_NOTICE =
  /(?:(?:^|\n)[ \t]*(?:⚠️?[ \t]*)?Warning:|\*\*Warning:\*\*)[^\n]*(?:requests go through|inference gateway)[^\n]*(?:\n(?![ \t]*\n)[^\n]*)*/giu;

/** The text without the notices the CLI added, trimmed where one was taken out. */
export function withoutCliNotices(text: string): string {
  if (!/Warning:/i.test(text)) return text;
  const stripped = text.replace(GATEWAY_NOTICE, '');
  return stripped === text ? text : stripped.trim();
}
