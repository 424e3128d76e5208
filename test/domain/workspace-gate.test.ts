// domain/workspace-gate.ts: at most `perWorkspace` of one workspace's work at a time (and
// `inFlight` in all), the next waiting one whose workspace has a slot free going first.
import { expect } from 'chai';
import { WorkspaceGate } from '../../src/domain/workspace-gate.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('WorkspaceGate', () => {
  it("runs one workspace's work one at a time, in order, and another workspace's at once", async () => {
    const gate = new WorkspaceGate(Number.MAX_SAFE_INTEGER, 1);
    const log: string[] = [];
    const finish: Record<string, () => void> = {};
    const work = (name: string) => () =>
      new Promise<void>((done) => {
        log.push(`start ${name}`);
        finish[name] = done;
      });
    const runs = [gate.run('a', work('a1')), gate.run('a', work('a2')), gate.run('a', work('a3')), gate.run('b', work('b1'))];
    await tick();
    expect(log).to.deep.equal(['start a1', 'start b1']);
    finish['a1']!();
    await tick();
    expect(log).to.deep.equal(['start a1', 'start b1', 'start a2']);
    finish['a2']!();
    finish['b1']!();
    await tick();
    finish['a3']!();
    await Promise.all(runs);
    expect(log).to.deep.equal(['start a1', 'start b1', 'start a2', 'start a3']);
  });

  it('gives the slot back when the work throws, and a slot entered is left once however often it is left', async () => {
    const gate = new WorkspaceGate(2, 1);
    await gate.run('a', async () => Promise.reject(new Error('failed'))).catch(() => undefined);
    const leave = await gate.enter('a');
    leave();
    leave(); // a second call does nothing: it must not free a slot someone else holds
    const held = await gate.enter('a');
    let second = false;
    const waiting = gate.enter('a').then((leaveSecond) => {
      second = true;
      leaveSecond();
    });
    await tick();
    expect(second, 'the slot is held by one').to.equal(false);
    leave(); // the earlier holder's stale release: still nothing
    await tick();
    expect(second).to.equal(false);
    held();
    await waiting;
    expect(second).to.equal(true);
  });

  it('holds at most inFlight in all, whatever the workspaces', async () => {
    const gate = new WorkspaceGate(2, 1);
    const leaves = await Promise.all([gate.enter('a'), gate.enter('b')]);
    let third = false;
    const waiting = gate.enter('c').then((leave) => {
      third = true;
      leave();
    });
    await tick();
    expect(third).to.equal(false);
    leaves[0]!();
    await waiting;
    expect(third).to.equal(true);
    leaves[1]!();
  });

  it('gives up a wait longer than maxWait with its error, and the work never runs; the queue goes on', async () => {
    const gate = new WorkspaceGate(Number.MAX_SAFE_INTEGER, 1);
    const leave = await gate.enter('a');
    let ran = false;
    const started = Date.now();
    const gaveUp = await gate
      .run('a', async () => void (ran = true), { ms: 50, tooLong: () => new Error('waited too long') })
      .then(() => undefined, (err: Error) => err);
    expect(gaveUp?.message).to.equal('waited too long');
    expect(Date.now() - started).to.be.within(40, 500);
    expect(ran).to.equal(false);
    // A bounded wait that gets its turn in time runs, and its timer no longer matters.
    const inTime = gate.run('a', async () => 'ran', { ms: 200, tooLong: () => new Error('no') });
    leave();
    expect(await inTime).to.equal('ran');
    await new Promise((r) => setTimeout(r, 250));
    expect(await gate.run('a', async () => 'still free')).to.equal('still free');
  });
});
