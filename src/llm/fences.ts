/** Markdown fenced blocks in a model reply, in order, with their info string. */
export interface FencedBlock {
  info: string;
  body: string;
}

/** A closing fence may end in \r: some servers send CRLF replies. */
const FENCE = /^(`{3,})([^\n`]*)\n([\s\S]*?)^\1[ \t]*\r?$/gm;

export function extractFencedBlocks(text: string): FencedBlock[] {
  return Array.from(text.matchAll(FENCE), (match) => ({ info: (match[2] ?? '').trim(), body: match[3] ?? '' }));
}
