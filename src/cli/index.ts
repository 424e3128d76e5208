#!/usr/bin/env node
// The admin command line: `npm run cli -- <command>`, or `pds <command>` once installed.
// It talks to the Redis that REDIS_URL names, like the service.
import { Command } from 'commander';
import { backupCommands } from './commands/backup.js';
import { banCommands } from './commands/ban.js';
import { erasureCommands } from './commands/erasure.js';
import { boardCommands } from './commands/board.js';
import { keyCommands } from './commands/key.js';
import { playerCommands } from './commands/player.js';
import { usageCommands } from './commands/usage.js';
import { workspaceCommands } from './commands/workspace.js';

const program = new Command()
  .name('pds')
  .description('Administer the player data service: workspaces, API keys and more.')
  .showHelpAfterError()
  .exitOverride((err) => {
    process.exit(err.exitCode === 0 ? 0 : 2);
  });

workspaceCommands(program);
keyCommands(program);
banCommands(program);
usageCommands(program);
playerCommands(program);
boardCommands(program);
backupCommands(program);
erasureCommands(program);

await program.parseAsync(process.argv);
