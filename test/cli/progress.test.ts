// The CLI's progress bar: drawn on a terminal only, with its share of the total, and wiped at
// the end so that the summary starts on a clean line.
import { expect } from 'chai';
import { progressBar } from '../../src/cli/progress.js';

function fakeStream(isTTY: boolean) {
  const written: string[] = [];
  return { stream: { isTTY, write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream, written };
}

describe('cli/progress', () => {
  it('draws a bar with the share done on a terminal, and wipes it when finished', async () => {
    const { stream, written } = fakeStream(true);
    const bar = progressBar('export ws_1', 'players', stream);
    await new Promise((r) => setTimeout(r, 120));
    bar.update(250, 1000);
    expect(written[0]).to.match(/^\rexport ws_1 \[#{8}\.{22}\]  25% 250 players \(\d+\/s\)/);
    bar.update(260, 1000); // within 100 ms: not drawn again
    expect(written).to.have.length(1);
    bar.finish();
    expect(written[1]).to.equal('\r\u001b[K');
  });

  it('draws nothing when stderr is not a terminal', () => {
    const { stream, written } = fakeStream(false);
    const bar = progressBar('import', 'bytes', stream);
    bar.update(5, 10);
    bar.finish();
    expect(written).to.deep.equal([]);
  });
});
