// A small, hand-written mutation pass: each mutant is one deliberate bug (a text replacement in
// one source file) that some test must catch. They are applied one at a time, the test files
// that guard that code are run (never the whole suite), and the file is put back byte for byte,
// whatever happens (a failed run, Ctrl-C). A mutant whose tests still pass "survived": a
// behaviour no test pins. docs/testing.md lists the mutants and the last result.
//
//   npm run mutants                  every mutant
//   npm run mutants -- body-limit    those whose id contains "body-limit"
//   npm run mutants -- --list        the mutants, without running anything
//   npm run mutants -- --check       only whether each mutant still applies (no test, no file changed)
//   npm run mutants -- --no-baseline skip the first run of the chosen tests without mutants
//
// Exit status: 0 when every mutant was caught, 1 when one survived, 2 when a mutant no longer
// applies (its text is gone from the file: update the mutant with the code).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface Mutant {
  readonly id: string;
  /** The bug, in words. */
  readonly bug: string;
  readonly file: string;
  /** Text that must occur exactly once in the file. */
  readonly find: string;
  readonly replace: string;
  /** The test files that must catch it. */
  readonly tests: readonly string[];
}

export const MUTANTS: readonly Mutant[] = [
  {
    id: 'body-limit-declared',
    bug: 'a declared Content-Length of exactly MAX_BODY_BYTES is refused (off by one)',
    file: 'src/http/middleware/json-body.ts',
    find: 'if (length !== null && length > maxBodyBytes) {',
    replace: 'if (length !== null && length >= maxBodyBytes) {',
    tests: ['test/http/body-limit.test.ts', 'test/http/validation.test.ts'],
  },
  {
    id: 'body-limit-streamed',
    bug: 'a chunked body one byte over MAX_BODY_BYTES is read (off by one)',
    file: 'src/http/middleware/json-body.ts',
    find: 'if (decoded > limit) return finish(',
    replace: 'if (decoded > limit + 1) return finish(',
    tests: ['test/http/body-limit.test.ts', 'test/http/validation.test.ts'],
  },
  {
    id: 'streamed-body-chunks-free',
    bug: "a chunked or compressed body's chunks after the first 64 KiB are not charged to the byte budget",
    file: 'src/http/middleware/json-body.ts',
    find: '(part) => budget.chargePart(workspaceId, part)',
    replace: '(part) => budget.charge(workspaceId, part)',
    tests: ['test/http/byte-budget.test.ts'],
  },
  {
    id: 'heavy-turn-read-free',
    bug: "a whole read of a large player does not wait for its workspace's heavy turn, so it runs beside the workspace's large write",
    file: 'src/http/byte-budget.ts',
    find: '  ctx.state.answerPaid = (ctx.state.answerPaid ?? 0) + bytes;\n  await ctx.state.heavyTurn?.();',
    replace: '  ctx.state.answerPaid = (ctx.state.answerPaid ?? 0) + bytes;',
    tests: ['test/http/heavy-requests.test.ts'],
  },
  {
    id: 'heavy-turn-left-at-return',
    bug: "a heavy request leaves its workspace's turn when its handler returns, before its answer is sent",
    file: 'src/http/byte-budget.ts',
    find: 'if (closed) leave();',
    replace: 'if (true) leave();',
    tests: ['test/http/heavy-requests.test.ts'],
  },
  {
    id: 'heavy-turn-send-unbounded',
    bug: 'a heavy request whose answer cannot be sent (pipelined behind a request waiting for the turn) keeps the turn for ever',
    file: 'src/http/byte-budget.ts',
    find: 'else if (turn !== undefined) bound = setTimeout(leave, HEAVY_TURN_SEND_MS).unref();',
    replace: '',
    tests: ['test/http/heavy-requests.test.ts'],
  },
  {
    id: 'writes-side-by-side',
    bug: "a workspace's writes run side by side, so all of them run before the first one's copies inside Redis are paid for",
    file: 'src/saves/player-turns.ts',
    find: 'export const WRITES_PER_WORKSPACE = 1;',
    replace: 'export const WRITES_PER_WORKSPACE = 1000;',
    tests: ['test/http/heavy-requests.test.ts'],
  },
  {
    id: 'write-turn-unchecked',
    bug: 'a write that waited for its turn runs though the write before it left the workspace in debt',
    file: 'src/saves/player-turns.ts',
    find: '      bytes?.refuseInDebt();\n',
    replace: '',
    tests: ['test/http/heavy-requests.test.ts'],
  },
  {
    id: 'batch-side-by-side',
    bug: "a many-player batch's players all run in one turn, side by side, so every one runs before the first one's copies are paid for",
    file: 'src/saves/player-turns.ts',
    find: '    const groups = this.byNode(workspaceId, userIds);\n',
    replace: '    if (userIds.length > 0) return this.inTurn(workspaceId, bytes, userIds[0]!, () => Promise.all(userIds.map(work)));\n    const groups = this.byNode(workspaceId, userIds);\n',
    tests: ['test/http/heavy-requests.test.ts'],
  },
  {
    id: 'batch-work-per-script',
    bug: "what a request's scripts copy inside Redis is charged per script, so a batch's players each under LARGE_BYTES copy up to 6.4 MiB uncharged",
    file: 'src/http/byte-budget.ts',
    find: '  if (total <= LARGE_BYTES) return 0;',
    replace: '  if (bytes <= LARGE_BYTES) return 0;',
    tests: ['test/http/heavy-requests.test.ts'],
  },
  {
    id: 'batch-refused-kept-as-one',
    bug: "a batch whose later players were refused unwritten keeps its answer in its claim, so a retry with its key replays the refusals and never writes them",
    file: 'src/saves/player-writes.ts',
    find: '    if (ran.length < replies.length) {',
    replace: '    if (ran.length < 0) {',
    tests: ['test/http/heavy-requests.test.ts'],
  },
  {
    id: 'luau-shutdown-drops-refused',
    bug: "the Luau shutdown save gives up the players a batch refused unwritten (429 past the byte budget) instead of sending them again",
    file: 'clients/luau/src/init.luau',
    find: 'if waitOnRateLimit and deadline ~= nil and unwritten(outcome) then',
    replace: 'if false and unwritten(outcome) then',
    tests: ['test/clients/luau-sessions.test.ts'],
  },
  {
    id: 'luau-join-refused-alone-raises',
    bug: 'the Luau session layer raises RATE_LIMITED for a join refused alone in a many-player acquire instead of asking again',
    file: 'clients/luau/src/init.luau',
    find: 'if code == "RATE_LIMITED" or code == "STORAGE_UNAVAILABLE" or code == "OUTCOME_UNKNOWN" then',
    replace: 'if false then',
    tests: ['test/clients/luau-sessions.test.ts'],
  },
  {
    id: 'sessions-outside-turns',
    bug: "a many-player session call's scripts run without their workspace's turn, so a burst of them all runs at once",
    file: 'src/saves/player-turns.ts',
    find: '        const leave = await this.nodeTurn(workspaceId, bytes, node);\n        if (leave instanceof AppError) {\n          for (const i of group)',
    replace: '        const leave = (): void => {};\n        if (leave instanceof AppError) {\n          for (const i of group)',
    tests: ['test/http/heavy-requests.test.ts'],
  },
  {
    id: 'batch-node-failure-fails-request',
    bug: "a batch player whose Redis node fails fails the whole request (503), the players already written on healthy masters answered as failed",
    file: 'src/saves/player-turns.ts',
    find: '          const failed = storageFailure(err);\n          if (!failed) throw err;\n',
    replace: '          const failed = undefined as AppError | undefined;\n          if (!failed) throw err;\n',
    tests: ['test/cluster/failover-isolation.test.ts'],
  },
  {
    id: 'batch-nodes-one-after-another',
    bug: "a batch's nodes are written one after another, so the players on healthy masters wait for the one on a failed master",
    file: 'src/saves/player-turns.ts',
    find: '    allOrFirstFailure(await Promise.allSettled([...groups].map(([node, group]) => nodeInTurns(node, group))));\n',
    replace: '    for (const [node, group] of groups) await nodeInTurns(node, group);\n',
    tests: ['test/cluster/failover-isolation.test.ts'],
  },
  {
    id: 'write-turn-queue-blames-storage',
    bug: "a write queued past its workspace's turn while Redis answers is 503 STORAGE_UNAVAILABLE instead of 429 at the workspace's own pace",
    file: 'src/saves/write-turns.ts',
    find: '    if (turn.movedAtMs < since) return storageUnavailable(',
    replace: '    return storageUnavailable(',
    tests: ['test/saves/write-turns.test.ts'],
  },
  {
    id: 'luau-failed-alone-not-sent-again',
    bug: 'the Luau session layer reports the players of a save that failed alone for their Redis node as failed instead of sending the request again',
    file: 'clients/luau/src/init.luau',
    find: 'while players ~= nil and attempt < config.attempts and failedAlone(byUserId) do',
    replace: 'while false do',
    tests: ['test/clients/luau-failed-players.test.ts'],
  },
  {
    id: 'ts-client-failed-alone-not-sent-again',
    bug: 'the TypeScript client hands back the players of a many-player call that failed alone for their Redis node instead of sending the request again',
    file: 'clients/typescript/src/client.ts',
    find: 'const again = await this.transport.sendAgain(request, answer, { status });',
    replace: 'const again = status > 0 ? undefined : await this.transport.sendAgain(request, answer, { status });',
    tests: ['test/cluster/failover-isolation.test.ts'],
  },
  {
    id: 'many-player-load-not-heavy',
    bug: "an acquire loading many players, each under LARGE_BYTES, is not a heavy request, so a burst of them reads and answers side by side",
    file: 'src/http/routes/sessions.ts',
    find: 'const loading = input.load === true && userIds.length > 1;',
    replace: 'const loading = false;',
    tests: ['test/http/heavy-requests.test.ts'],
  },
  {
    id: 'answer-paid-all-or-nothing',
    bug: 'an answer that holds one player charged before its read is not debited at all, whatever else it carries',
    file: 'src/http/byte-budget.ts',
    find: 'const owed = bytes - (ctx.state.answerPaid ?? 0);',
    replace: 'const owed = ctx.state.answerPaid ? 0 : bytes;',
    tests: ['test/http/heavy-requests.test.ts'],
  },
  {
    id: 'handed-messages-free',
    bug: "the messages a batch hands its players' sessions are paid only with the whole answer, so every player of the batch is written first",
    file: 'src/saves/player-writes.ts',
    find: 'if (reply.reply.applied) origin.bytes?.chargeAnswer(',
    replace: 'if (false) origin.bytes?.chargeAnswer(',
    tests: ['test/http/heavy-requests.test.ts'],
  },
  {
    id: 'message-reads-not-heavy',
    bug: "reads of a player's messages (up to 100 of 16 KiB) are not heavy requests, so a burst of them reads and answers side by side",
    file: 'src/http/routes/messages.ts',
    find: '    await heavyFromTheStart(ctx);\n    const waiting',
    replace: '    const waiting',
    tests: ['test/http/heavy-requests.test.ts'],
  },
  {
    id: 'timed-out-write-unavailable',
    bug: 'a write whose command timed out after it was sent answers STORAGE_UNAVAILABLE ("nothing happened"), not OUTCOME_UNKNOWN',
    file: 'src/store/redis/redis.ts',
    find: "if (/Command timed out/.test(err.message)) return true;",
    replace: '',
    tests: ['test/saves/outcome-unknown.test.ts'],
  },
  {
    id: 'board-write-unknown-unavailable',
    bug: 'a leaderboard write whose script was sent and not answered in time answers STORAGE_UNAVAILABLE ("nothing was written"), not OUTCOME_UNKNOWN',
    file: 'src/store/boards/leaderboard-store.ts',
    find: 'const raw = await changing(this.redis, () =>',
    replace: 'const raw = await ((_c: unknown, run: () => Promise<Array<string | number>>) => run())(this.redis, () =>',
    tests: ['test/boards/board-writes.test.ts'],
  },
  {
    id: 'message-depth-unchecked',
    bug: "a message is not held to MAX_VALUE_DEPTH: 100 levels are kept, and 20,000 levels are a 500 from JSON.stringify's stack",
    file: 'src/http/routes/messages.ts',
    find: 'const problem = checkMessage(input.message, config.limits.maxValueDepth);',
    replace: 'const problem = undefined as string | undefined;',
    tests: ['test/security/nesting-and-control.test.ts'],
  },
  {
    id: 'c1-control-characters-allowed',
    bug: 'key names, session owners and workspace names take C1 control characters (U+0080-U+009F, such as U+0085)',
    file: 'src/domain/value.ts',
    find: "export const CONTROL_CHARACTERS = '\\\\u0000-\\\\u001f\\\\u007f-\\\\u009f';",
    replace: "export const CONTROL_CHARACTERS = '\\\\u0000-\\\\u001f\\\\u007f';",
    tests: ['test/security/nesting-and-control.test.ts'],
  },
  {
    id: 'webhook-game-id-inexact',
    bug: 'a webhook GameId above 2^53 - 1 (1e300) passes the schema, which no double holds exactly',
    file: 'src/schemas/roblox-webhook.ts',
    find: "{ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },",
    replace: "{ type: 'integer', minimum: 1 },",
    tests: ['test/http/roblox-webhook.test.ts'],
  },
  {
    id: 'unknown-outcome-uncounted',
    bug: 'a write whose outcome is unknown is not counted toward the quota until the recount',
    file: 'src/saves/storage-quota.ts',
    find: '    this.usage.record(workspaceId, bytes, 0);\n    this.usage.scheduleRecount',
    replace: '    this.usage.scheduleRecount',
    tests: ['test/saves/outcome-unknown.test.ts'],
  },
  {
    id: 'unknown-outcome-never-recounted',
    bug: "the storage totals are never recounted after writes whose outcome was unknown",
    file: 'src/saves/storage-quota.ts',
    find: '    this.usage.scheduleRecount(workspaceId, nowMs);',
    replace: '',
    tests: ['test/saves/outcome-unknown.test.ts'],
  },
  {
    id: 'gate-bans-cgnat',
    bug: 'carrier-grade NAT addresses (100.64.0.0/10) can be banned automatically',
    file: 'src/gate/checks.ts',
    find: "'carrierGradeNat', ",
    replace: '',
    tests: ['test/gate/never-banned.test.ts', 'test/http/gate-checks.test.ts', 'test/http/gate-bans.test.ts'],
  },
  {
    id: 'gate-bans-unique-local',
    bug: 'IPv6 unique-local and link-local addresses can be banned automatically',
    file: 'src/gate/checks.ts',
    find: "'linkLocal', 'uniqueLocal', ",
    replace: '',
    tests: ['test/gate/never-banned.test.ts', 'test/http/gate-checks.test.ts', 'test/http/gate-bans.test.ts'],
  },
  {
    id: 'address-leading-zeros',
    bug: 'an IPv4 address with leading zeros ("010.0.0.1") parses, a second spelling of one address',
    file: 'src/domain/address.ts',
    find: 'const DOTTED_QUAD = /^(0|[1-9]\\d{0,2})\\.',
    replace: 'const DOTTED_QUAD = /^(\\d{1,3})\\.',
    tests: ['test/domain/address.test.ts'],
  },
  {
    id: 'increment-not-a-number',
    bug: 'an increment of a stored value that is not a JSON number counts it as 0 (both checks gone)',
    file: 'lua/write-player.lua',
    find: [
      "        if not json or not string.match(json, '^%-?%d+%.?%d*[eE]?[%+%-]?%d*$') then",
      '          return answer({ -1, version, index })',
      '        end',
      '        base = tonumber(json)',
      '        if not base then return answer({ -1, version, index }) end',
    ].join('\n'),
    replace: '        base = tonumber(json) or 0',
    tests: ['test/lua/write-player.test.ts', 'test/http/data-increment.test.ts'],
  },
  {
    id: 'not-a-number-status',
    bug: 'NOT_A_NUMBER is answered 400 instead of 409',
    file: 'src/errors.ts',
    find: 'NOT_A_NUMBER: 409,',
    replace: 'NOT_A_NUMBER: 400,',
    tests: ['test/http/data-increment.test.ts'],
  },
  {
    id: 'rate-limit-one-more',
    bug: 'the fixed window grants one request more than the plan allows',
    file: 'lua/rate-limit.lua',
    find: 'local left = limit - count\n',
    replace: 'local left = limit - count + 1\n',
    tests: ['test/lua/rate-limit.test.ts', 'test/store/workspaces/rate-limiter.test.ts'],
  },
  // Issue 40, items 2 and 5: readiness and the limiter while a master fails over.
  {
    id: 'limiter-fallback-unlimited',
    bug: "while the window's master does not answer, an instance lets every request through, past its share",
    file: 'src/store/workspaces/rate-limiter.ts',
    find: 'const limited = f.left <= 0;',
    replace: 'const limited = false;',
    tests: ['test/store/workspaces/rate-limiter.test.ts'],
  },
  {
    id: 'limiter-fallback-charge',
    bug: 'what an instance let through without Redis is never charged to the window',
    file: 'lua/rate-limit.lua',
    find: "local charged = tonumber(ARGV[5] or '0')",
    replace: 'local charged = 0',
    tests: ['test/lua/rate-limit.test.ts', 'test/store/workspaces/rate-limiter.test.ts'],
  },
  {
    id: 'readiness-every-master',
    bug: '/readyz answers 503 on every instance when one master of a cluster does not answer',
    file: 'src/ops/health.ts',
    find: 'if (reach.answering.length === 0) {',
    replace: 'if (reach.notAnswering.length > 0) {',
    tests: ['test/cluster/master-failover.test.ts'],
  },
  {
    id: 'session-never-locked',
    bug: "a second game server acquires a player another server's live session holds",
    file: 'lua/player-session.lua',
    find: "if id and ARGV[5] ~= '1' and owner ~= ARGV[3] then",
    replace: 'if false then',
    tests: ['test/lua/scripts.test.ts', 'test/saves/sessions.test.ts'],
  },
  {
    id: 'idempotency-key-reuse',
    bug: 'an idempotency key sent with a different write replays the first answer instead of 422',
    file: 'lua/includes/idempotency.lua',
    find: 'if string.sub(kept, 1, nl - 1) ~= idemFp then return { -8 } end',
    replace: '',
    tests: ['test/lua/scripts.test.ts', 'test/saves/idempotency.test.ts'],
  },
  // The survivors of issue 27's mutation pass, each now pinned by a test.
  {
    id: 'idempotency-claim-ttl',
    bug: "the workspace's claim of an idempotency key lives 1 s instead of IDEMPOTENCY_TTL_SECONDS",
    file: 'src/store/workspaces/idempotency-claims.ts',
    find: "'EX', String(ttlSeconds)",
    replace: "'EX', '1'",
    tests: ['test/saves/idempotency.test.ts'],
  },
  {
    id: 'session-answer-ttl',
    bug: "a session call's kept answer lives 1 s instead of IDEMPOTENCY_TTL_SECONDS",
    file: 'lua/player-session.lua',
    find: 'local action, idemFp, idemTtl = ARGV[1], ARGV[6], ARGV[7]',
    replace: "local action, idemFp, idemTtl = ARGV[1], ARGV[6], '1'",
    tests: ['test/saves/idempotency.test.ts'],
  },
  {
    id: 'quota-warning-per-instance',
    bug: "a storage quota crossing is logged by every instance that sees it, not once across the fleet",
    file: 'src/saves/quota-warnings.ts',
    find: '        const before = await swapQuotaLevel(this.redis, workspaceId, level, share);',
    replace: '        await swapQuotaLevel(this.redis, workspaceId, level, share);\n        const before = seen ?? 0;',
    tests: ['test/saves/quota-warnings.test.ts'],
  },
  {
    id: 'quota-at-limit',
    bug: 'a workspace at exactly its storage quota may still add data',
    file: 'src/saves/storage-quota.ts',
    find: 'if (counted >= quota) {',
    replace: 'if (counted > quota) {',
    tests: ['test/saves/storage-quota.test.ts'],
  },
  {
    id: 'quota-weighs-history',
    bug: 'the storage quota counts history, so a workspace full of history refuses every save',
    file: 'src/saves/storage-quota.ts',
    find: 't.bytes - t.historyBytes - t.boardBytes',
    replace: 't.bytes - t.boardBytes',
    tests: ['test/saves/history-sweep.test.ts'],
  },
  {
    id: 'newest-point-never-leaves',
    bug: "a player's newest restore point never leaves, whatever its age",
    file: 'lua/includes/restore-points.lua',
    find: '  while #index.f + #index.c > 0 do',
    replace: '  while #index.f + #index.c > 1 do',
    tests: ['test/lua/history-sweep.test.ts'],
  },
  {
    id: 'export-skips-dunder-keys',
    bug: 'workspace export leaves out data keys starting with __',
    file: 'src/admin/player-lines.ts',
    find: '    const entry = decodeEntry(fields[i + 1]!);',
    replace: "    if (field.startsWith('__')) continue;\n    const entry = decodeEntry(fields[i + 1]!);",
    tests: ['test/admin/workspace-transfer.test.ts'],
  },
  {
    id: 'export-skips-dunder-players',
    bug: 'workspace export leaves out players whose user id starts with __',
    file: 'src/admin/workspace-transfer.ts',
    find: 'if (keys === 0 && version === 0) continue;',
    replace: "if ((keys === 0 && version === 0) || player.userId.startsWith('__')) continue;",
    tests: ['test/admin/workspace-transfer.test.ts'],
  },
  {
    id: 'import-skips-dunder-keys',
    bug: 'workspace import drops data keys starting with __',
    file: 'src/admin/player-lines.ts',
    find: '    const key = member.key;',
    replace: "    const key = member.key;\n    if (key.startsWith('__')) continue;",
    tests: ['test/admin/workspace-transfer.test.ts'],
  },
  {
    id: 'import-skips-dunder-players',
    bug: 'workspace import drops players whose user id starts with __',
    file: 'src/admin/workspace-transfer.ts',
    find: '    const reply = await importPlayer(',
    replace: "    if (player.userId.startsWith('__')) return;\n    const reply = await importPlayer(",
    tests: ['test/admin/workspace-transfer.test.ts'],
  },
  {
    id: 'import-skip-overwrites',
    bug: 'workspace import --mode skip replaces an existing player that holds other data',
    file: 'lua/import-player.lua',
    find: "  if mode ~= 'overwrite' then return { 0, version, 0, 0, 0 } end\n",
    replace: '',
    tests: ['test/admin/workspace-transfer.test.ts'],
  },
  {
    id: 'ping-deleted-workspace',
    bug: '/ping for a workspace deleted after its key was cached answers UNAUTHORIZED instead of KEY_REVOKED',
    file: 'src/http/routes/ping.ts',
    find: "unauthorized('API key has been revoked', ErrorCode.KEY_REVOKED)",
    replace: "unauthorized('API key has been revoked')",
    tests: ['test/http/ping.test.ts'],
  },
  {
    id: 'message-marker-kept',
    bug: "an acquire without load keeps the last session's delivery marker: messages handed to a crashed server are never handed to the next",
    file: 'lua/player-session.lua',
    find: "if handed then redis.call('HSET', P, '\\0md', handed) else redis.call('HDEL', P, '\\0md') end",
    replace: "if handed then redis.call('HSET', P, '\\0md', handed) end",
    tests: ['test/saves/messages-exactly-once.test.ts'],
  },
  {
    id: 'message-ack-ignored',
    bug: "a save's acknowledgements remove nothing, so the next session is handed (and applies) the same messages again",
    file: 'lua/write-player.lua',
    find: "if #gone > 0 then redis.call('HDEL', M, unpack(gone)) end",
    replace: "if #gone > 0 then redis.call('HEXISTS', M, gone[1]) end",
    tests: ['test/saves/messages.test.ts', 'test/saves/messages-exactly-once.test.ts'],
  },
  // Issue 38, items 2-6: what an erasure must reach beyond the player's own keys.
  {
    id: 'erasure-kept-elsewhere',
    bug: "an erasure leaves a many-player answer kept in its claim and a board write's kept answer: a replay hands the erased player's messages and session",
    file: 'src/erasure/eraser.ts',
    find: 'await deleteKeptElsewhere(redis, workspaceId, noted);',
    replace: '',
    tests: ['test/erasure/copies.test.ts'],
  },
  {
    id: 'erasure-message-bytes',
    bug: "an erased player's waiting messages stay in the workspace's messageBytes until they expire (up to 90 days)",
    file: 'src/erasure/eraser.ts',
    find: 'const messages = new Map([...erased.messages].map(([hour, bytes]) => [hour, -bytes]));',
    replace: 'const messages = new Map<number, number>();',
    tests: ['test/erasure/copies.test.ts'],
  },
  {
    id: 'erasure-audit-user-id',
    bug: "the audit trail keeps an erased player's raw user id in a board entry's removal (details.userId)",
    file: 'src/erasure/eraser.ts',
    find: '{ within: `"workspaceId":"${w}"`, from: `"userId":"${name}"`, to: `"userId":"${byDigest}"` },',
    replace: '',
    tests: ['test/erasure/copies.test.ts'],
  },
  {
    id: 'erasure-player-names',
    bug: "an erasure of user 42 leaves the players named after it by the workspace's templates (a ProfileStore profile Player_42)",
    file: 'src/erasure/worker.ts',
    find: 'const alsoNamed = await new ErasurePlayerNames(this.deps.redis).namesIn(targets, job.userId!);',
    replace: 'const alsoNamed = new Map<string, string[]>();',
    tests: ['test/erasure/player-names.test.ts'],
  },
  {
    id: 'erasure-players-list',
    bug: 'an erased player stays on the players list (admin API, CLI, console) with version 0',
    file: 'src/erasure/places.ts',
    find: 'removePlayer: (workspaceId, userId) => index.forget(workspaceId, userId),',
    replace: 'removePlayer: async () => undefined,',
    tests: ['test/erasure/copies.test.ts'],
  },
  {
    id: 'import-board-erased',
    bug: "an import of an export taken before an erasure puts the erased player back on the leaderboards it loads",
    file: 'src/admin/board-lines.ts',
    find: 'const erased = await this.erased.among(line.entries.map(([userId]) => userId));',
    replace: 'const erased = new Set<string>();',
    tests: ['test/erasure/backups.test.ts'],
  },
  {
    id: 'players-resume-after',
    bug: 'a page of GET /players that ended inside a ZSCAN reply starts that reply again from its first player',
    file: 'src/store/workspaces/player-pages.ts',
    find: 'if (raw[i]! > after) reply.push',
    replace: 'if (raw[i]! >= "") reply.push',
    tests: ['test/http/players.test.ts'],
  },
  {
    id: 'players-without-data',
    bug: 'GET /players lists a player whose data was deleted entirely (its hash keeps the version)',
    file: 'src/store/workspaces/player-pages.ts',
    find: "read[2 * i] === 1 && read[2 * i + 1] !== '0'",
    replace: 'read[2 * i] === 1',
    tests: ['test/http/players.test.ts'],
  },
];

type Outcome = 'caught' | 'SURVIVED' | 'stale';

function occurrences(text: string, find: string): number {
  return text.split(find).length - 1;
}

/** Runs mocha on `tests` (no config, so not the whole suite); resolves with its exit code. */
function runTests(tests: readonly string[]): Promise<number> {
  const args = ['--no-config', '--node-option', 'import=tsx', '--require', 'test/support/hooks.ts', '--timeout', '30000', '--bail', '--reporter', 'dot', ...tests];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [fileURLToPath(new URL('../node_modules/mocha/bin/mocha.js', import.meta.url)), ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    running = child;
    child.on('exit', (code, signal) => {
      running = undefined;
      resolve(code ?? (signal ? 128 : 1));
    });
  });
}

let running: ReturnType<typeof spawn> | undefined;
/** The file currently mutated and its original bytes, put back on any exit. */
let mutated: { path: string; original: Buffer } | undefined;

function restore(): void {
  if (mutated) {
    writeFileSync(mutated.path, mutated.original);
    mutated = undefined;
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    running?.kill('SIGTERM');
    restore();
    process.stderr.write(`\nmutants: stopped by ${signal}; the mutated file is restored\n`);
    process.exit(130);
  });
}
process.on('exit', restore);

async function main(): Promise<number> {
  const filters = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const chosen = MUTANTS.filter((m) => filters.length === 0 || filters.some((f) => m.id.includes(f)));
  if (process.argv.includes('--list')) {
    for (const m of chosen) process.stdout.write(`${m.id}\n  ${m.bug}\n  ${m.file}; caught by ${m.tests.join(', ')}\n`);
    return 0;
  }
  if (process.argv.includes('--check')) {
    const stale = chosen.filter((m) => occurrences(readFileSync(`${ROOT}${m.file}`, 'utf8'), m.find) !== 1);
    for (const m of stale) process.stdout.write(`stale    ${m.id}: its text is not once in ${m.file}\n`);
    process.stdout.write(`${chosen.length - stale.length} of ${chosen.length} mutants apply\n`);
    return stale.length > 0 ? 2 : 0;
  }
  if (chosen.length === 0) {
    process.stderr.write(`mutants: no mutant matches ${filters.join(' ')} (see --list)\n`);
    return 2;
  }
  const started = Date.now();
  // A mutant counts as caught only if its tests pass without it.
  if (!process.argv.includes('--no-baseline')) {
    const all = [...new Set(chosen.flatMap((m) => m.tests))];
    if ((await runTests(all)) !== 0) {
      process.stderr.write(`mutants: the tests fail without any mutant; fix them first:\n  npm run test:only -- ${all.join(' ')}\n`);
      return 2;
    }
    process.stdout.write(`baseline: ${all.length} test files pass unmutated (${Math.round((Date.now() - started) / 1000)} s)\n\n`);
  }
  const results: Array<{ mutant: Mutant; outcome: Outcome; seconds: number }> = [];
  for (const mutant of chosen) {
    const path = `${ROOT}${mutant.file}`;
    const original = readFileSync(path);
    const text = original.toString('utf8');
    const t0 = Date.now();
    let outcome: Outcome;
    if (occurrences(text, mutant.find) !== 1) {
      outcome = 'stale';
    } else {
      mutated = { path, original };
      writeFileSync(path, text.replace(mutant.find, () => mutant.replace));
      try {
        outcome = (await runTests(mutant.tests)) === 0 ? 'SURVIVED' : 'caught';
      } finally {
        restore();
      }
    }
    const seconds = Math.round((Date.now() - t0) / 100) / 10;
    results.push({ mutant, outcome, seconds });
    process.stdout.write(`${outcome.padEnd(8)} ${mutant.id.padEnd(28)} ${String(seconds).padStart(6)} s  ${mutant.bug}\n`);
  }
  const count = (o: Outcome) => results.filter((r) => r.outcome === o).length;
  process.stdout.write(
    `\n${results.length} mutants: ${count('caught')} caught, ${count('SURVIVED')} survived, ${count('stale')} stale ` +
      `(${Math.round((Date.now() - started) / 1000)} s)\n`,
  );
  if (count('stale') > 0) return 2;
  return count('SURVIVED') > 0 ? 1 : 0;
}

process.exitCode = await main();
