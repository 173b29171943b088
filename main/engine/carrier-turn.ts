// A write over the DHT carrier leaves in parts, each on a later phase of the event loop:
// Node's TLS over a JavaScript stream finishes each write in an immediate, and libudx
// sends the last, partial packet of a write in the loop's next prepare phase. A group
// commit queued as an immediate right after such a write would hold it back by the whole
// commit, so the group commit asks here whether to let one turn of the loop pass first.

let wrote = false;

/** A DHT stream was written to. */
export function carrierWrote(): void {
  wrote = true;
}

/** Whether a DHT stream was written to since the last call; forgets it. */
export function takeCarrierWrote(): boolean {
  const was = wrote;
  wrote = false;
  return was;
}
