/**
 * A generated block of a document (the settings and cost tables of docs/deploy.md, the layout of
 * docs/architecture.md): everything from its opening marker comment to its closing one, markers included.
 */
export interface DocBlockMarkers {
  begin: string;
  end: string;
  /** The document, for the error when its markers are missing. */
  doc: string;
}

/** The block of `doc`, markers included; undefined when the markers are missing. */
export function docBlock(doc: string, { begin, end }: DocBlockMarkers): string | undefined {
  const start = doc.indexOf(begin);
  const stop = doc.indexOf(end);
  return start < 0 || stop < start ? undefined : doc.slice(start, stop + end.length);
}

/** `doc` with its block replaced by `block` (which carries the markers). */
export function withDocBlock(doc: string, markers: DocBlockMarkers, block: string): string {
  const current = docBlock(doc, markers);
  if (current === undefined) throw new Error(`${markers.doc} has no ${markers.begin} … ${markers.end} markers`);
  const start = doc.indexOf(markers.begin);
  return doc.slice(0, start) + block + doc.slice(start + current.length);
}
