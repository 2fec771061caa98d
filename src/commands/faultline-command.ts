/**
 * The Command subclass every faultline command is made of: an unknown flag or command is one line
 * naming what is accepted and exit 2, and a blank environment variable counts as unset.
 */
import { Command, type Option } from './commander.js';
import { EXIT_USAGE } from './run-command.js';

export class FaultlineCommand extends Command {
  override createCommand(name?: string): FaultlineCommand {
    return new FaultlineCommand(name);
  }

  // Not in commander's type declarations, but a documented extension point of Command.
  unknownOption(flag: string): never {
    const accepted = acceptedFlags(this);
    this.error(`unknown flag ${flag} for '${commandPath(this)}'; accepted: ${accepted.join(', ') || '(none)'}`, {
      code: 'commander.unknownOption',
      exitCode: EXIT_USAGE,
    });
  }

  /**
   * An environment variable set to "" (or blanks) counts as unset for every option read from the
   * environment: a client config that blanks FAULT_AGENT_CLIENT must not stop the server.
   * Commander reads any defined variable, so the blank ones are removed before it parses.
   */
  override parseAsync(argv?: readonly string[], options?: Parameters<Command['parseAsync']>[1]): Promise<this> {
    forgetBlankEnv(this);
    return super.parseAsync(argv, options);
  }

  /**
   * Where -h takes a value (toxiproxy-cli's host), a bare -h is someone asking for help: toxiproxy-cli
   * prints its help and exits 0 then, and so does this. Any other flag missing its value is a usage error.
   */
  optionMissingArgument(option: Option): never {
    if (option.short === '-h') this.help();
    this.error(`option '${option.flags}' argument missing`, { code: 'commander.optionMissingArgument' });
  }

  unknownCommand(): never {
    const names = this.commands.map((command) => command.name());
    this.error(`unknown command '${this.args[0] ?? ''}' for '${commandPath(this)}'; accepted: ${names.join(', ')}`, {
      code: 'commander.unknownCommand',
      exitCode: EXIT_USAGE,
    });
  }
}

function forgetBlankEnv(command: Command, env: NodeJS.ProcessEnv = process.env): void {
  for (const option of command.options) {
    const name = (option as Option).envVar;
    if (name !== undefined && env[name] !== undefined && env[name]!.trim() === '') delete env[name];
  }
  for (const sub of command.commands) forgetBlankEnv(sub, env);
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

function acceptedFlags(command: Command): string[] {
  const flags: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) {
    for (const option of c.options) if (option.long && !option.hidden) flags.push(option.long);
  }
  return [...new Set([...flags, '--help'])];
}
