/** What every tool family receives when it registers: configuration, file access, logging. */
import type { FileAccess } from '../access.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';

export interface ToolContext {
  config: Config;
  /** The only way tools read files (roots, absolute paths, size and binary checks). */
  access: FileAccess;
  log: Logger;
  /** Registers work to run when the server closes (e.g. stopping held proxies); absent in some tests. */
  onClose?: (close: () => Promise<void> | void) => void;
  /**
   * Registers what says the connection holds resources across calls (held proxies): an HTTP
   * session that does is never closed to make room for another client, nor for idleness.
   */
  onHold?: (holds: () => boolean) => void;
}
