/**
 * ConfigError in a module of its own, below the configuration's shape: src/config.ts names types
 * of the layers it configures (the API key registry among them), and those layers throw
 * ConfigError, so holding both in one module made an import cycle. src/config.ts re-exports it.
 */
import { BaseError } from './primitives/base-error.ts'

/** A configuration the service refuses to start with: every problem, each naming its variable, never a secret's value. */
export class ConfigError extends BaseError {
  override readonly name = 'ConfigError'
  constructor(readonly problems: string[]) {
    super('invalid configuration', { metaMessages: problems })
  }
}
