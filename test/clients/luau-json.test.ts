// The Luau tests are only as good as their HttpService stand-in: its pure-Luau JSON must follow
// the platform's JSONEncode/JSONDecode rules, and agree with JavaScript's JSON on real data.
import { expect } from 'chai';
import { startLuauVm, type LuauVm } from './luau-vm.js';

describe('Luau JSON of the HttpService stand-in', () => {
  let vm: LuauVm;
  before(async () => {
    vm = await startLuauVm();
  });

  const encode = async (luauExpression: string) =>
    (await vm.run(`return game:GetService("HttpService"):JSONEncode(${luauExpression})`))[0];

  it('encodes tables as the platform does: [1] makes an array, an empty table is [], nil is left out', async () => {
    expect(await encode('{}')).to.equal('[]');
    expect(await encode('{ 1, "a", true }')).to.equal('[1,"a",true]');
    expect(await encode('{ 1, 2, name = "ignored" }')).to.equal('[1,2]');
    expect(await encode('{ a = 1, b = nil }')).to.equal('{"a":1}');
    expect(JSON.parse((await encode('{ a = { 1, 2 }, b = { c = false } }')) as string)).to.deep.equal({ a: [1, 2], b: { c: false } });
    const [ok] = await vm.run('local t = {}; t.self = t; return pcall(function() return game:GetService("HttpService"):JSONEncode(t) end)');
    expect(ok).to.equal(false);
  });

  it('writes whole numbers without exponent or fraction, and other numbers so they read back exactly', async () => {
    expect(await encode('{ 0, -7, 123456789012, 2^53 }')).to.equal('[0,-7,123456789012,9007199254740992]');
    const numbers = [0.1, -3.5, 1 / 3, 1.5e-300, 1e300, 2 ** 60 + 0.5];
    const json = (await encode(`{ ${numbers.map((n) => n.toPrecision(17)).join(', ')} }`)) as string;
    expect(JSON.parse(json)).to.deep.equal(numbers);
  });

  it('escapes strings as JSON requires and keeps UTF-8 as it is', async () => {
    const text = 'q " b \\ nl \n tab \t nul \0 unit \u001f del \u007f é 😀';
    // Built in Luau: a raw NUL cannot cross luau-web's string boundary (it ends the string there).
    const [json] = await vm.run('return JSON.encode("q \\" b \\\\ nl \\n tab \\t nul \\0 unit \\31 del \\127 é 😀")');
    expect(JSON.parse(json as string)).to.equal(text);
    expect(json).to.not.match(/[\u0000-\u001f]/);
  });

  it('decodes what JavaScript encodes, arrays 1-based, and null as nil', async () => {
    const value = { s: 'é\u2028😀"\\/\n', n: [-0.5, 1e21, 3], t: true, f: false, o: { deep: [[], {}] } };
    const [back] = await vm.run('return JSON.encode(JSON.decode((...)))', JSON.stringify(value));
    // {} comes back as [] (an empty table), as it does on the platform.
    expect(JSON.parse(back as string)).to.deep.equal({ ...value, o: { deep: [[], []] } });
    const [first, count, hasNull] = await vm.run('local t = JSON.decode(\'[10, null, 30]\') return t[1], #t >= 1, t[2] == nil');
    expect([first, count, hasNull]).to.deep.equal([10, true, true]);
    const [escaped] = await vm.run('return JSON.decode(\'"\\\\u00e9\\\\ud83d\\\\ude00\\\\t"\')');
    expect(escaped).to.equal('é😀\t');
  });

  it('refuses invalid JSON like the platform: "Can\'t parse JSON"', async () => {
    for (const bad of ['', '{', '[1,]', '{"a" 1}', 'nul', '"unterminated', '"raw \n newline"', '1 2', "{'a':1}"]) {
      const [ok, err] = await vm.run('return pcall(function(...) return JSON.decode(...) end, ...)', bad);
      expect([ok, err], bad).to.deep.equal([false, "Can't parse JSON"]);
    }
  });
});
