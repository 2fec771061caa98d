/**
 * An index operation failed for a reason outside the caller's arguments: the store could not be
 * reached, the existing index was built with another vector dimension, the embedding provider is
 * misconfigured. The message says what and where (the URL, the path), for the person reading it.
 */
import { OperationalError } from '../kernel/errors.js';

export class IndexError extends OperationalError {
  override readonly name = 'IndexError';
  /**
   * @param reindex the tree to index (again) before this can succeed ('' when none is known yet):
   *   the message says "index it"; the doors say how (the tool, or the command), see withIndexHint.
   */
  constructor(
    message: string,
    readonly reindex?: string,
  ) {
    super(message);
  }
}

/** `error` with a door's way of indexing (`how(tree)`, '' for any tree) appended, when indexing is the remedy. */
export function withIndexHint(error: unknown, how: (tree: string) => string): unknown {
  if (!(error instanceof IndexError) || error.reindex === undefined) return error;
  return new IndexError(`${error.message}; to index: ${how(error.reindex)}`, error.reindex);
}
