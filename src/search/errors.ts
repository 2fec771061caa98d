/**
 * An index operation failed for a reason outside the caller's arguments: the store could not be
 * reached, the existing index was built with another vector dimension, the embedding provider is
 * misconfigured. The message says what and where (the URL, the path), for the person reading it.
 */
import { OperationalError } from '../kernel/errors.js';

export class IndexError extends OperationalError {
  override readonly name = 'IndexError';
}
