// One NDJSON line of a workspace export, both ways: values are carried as their stored JSON
// text (numbers as an increment wrote them), keys in the order written, and every malformed
// line is refused with a message naming the field.
import { Ajv } from 'ajv';
import { expect } from 'chai';
import { encodeEntry } from '../../src/domain/entry.js';
import { members } from '../../src/admin/json-members.js';
import { exportLine, parsePlayerLine } from '../../src/admin/player-lines.js';
import { isDataKey, keySchema, MAX_IMPORTED_VERSION } from '../../src/schemas/data.js';

const LIMITS = { maxValueDepth: 4, maxKeysPerPlayer: 3, maxPlayerBytes: 1000 };
const AT = '2026-11-23T10:00:00.123Z';
const MS = Date.parse(AT);

describe('admin/player-lines', () => {
  it('round-trips stored entries byte for byte, in the hash\'s order, integer-like keys included', () => {
    const fields = ['\0v', '4', 'z', encodeEntry('1e-07', MS), '\0n', '3', '10', encodeEntry('{"a":"}\\"{","b":[1.50]}', MS), 'ké\\"y', encodeEntry('"x"', MS)];
    const { line, keys } = exportLine('42', fields);
    expect(keys).to.equal(3);
    expect(JSON.parse(line).data['10'].value).to.deep.equal({ a: '}"{', b: [1.5] });
    const back = parsePlayerLine(line, LIMITS);
    expect(back).to.deep.equal({ userId: '42', version: 4, keys: 3, fields: fields.filter((_, i) => ![0, 1, 4, 5].includes(i)) });
  });

  it('takes the text and order from lines formatted with spaces and other field orders', () => {
    const line = ` { "data" : { "b" : { "updated_at" : "${AT}" , "value" : [ 1 , 2 ] } , "a" : { "value" : 3.0 , "updated_at" : "${AT}" } } , "version" : 2 , "userId" : 7 } `;
    expect(parsePlayerLine(line, LIMITS).fields).to.deep.equal(['b', encodeEntry('[ 1 , 2 ]', MS), 'a', encodeEntry('3.0', MS)]);
    expect(members('{}', 0)).to.deep.equal([]);
  });

  for (const [name, line, message] of [
    ['not JSON', '{"userId":', /not valid JSON/],
    ['an array', '[]', /JSON object/],
    ['an unknown field', '{"userId":"1","version":1,"data":{},"x":1}', /unknown field "x"/],
    ['a bad userId', '{"userId":"a b","version":1,"data":{}}', /userId/],
    ['a negative version', '{"userId":"1","version":-1,"data":{}}', /version/],
    ['data with version 0', `{"userId":"1","version":0,"data":{"a":{"value":1,"updated_at":"${AT}"}}}`, /at least 1/],
    ['a null value', `{"userId":"1","version":1,"data":{"a":{"value":null,"updated_at":"${AT}"}}}`, /data\["a"\]\.value: value must not be null/],
    ['a deep value', `{"userId":"1","version":1,"data":{"a":{"value":[[[[[1]]]]],"updated_at":"${AT}"}}}`, /nested deeper/],
    ['a bad time', '{"userId":"1","version":1,"data":{"a":{"value":1,"updated_at":"yesterday"}}}', /updated_at/],
    ['a key twice', `{"userId":"1","version":1,"data":{"a":{"value":1,"updated_at":"${AT}"},"a":{"value":2,"updated_at":"${AT}"}}}`, /twice/],
    ['a control character in a key', `{"userId":"1","version":1,"data":{"a\\u0001":{"value":1,"updated_at":"${AT}"}}}`, /control characters/],
    ['too many keys', `{"userId":"1","version":1,"data":{${['a', 'b', 'c', 'd'].map((k) => `"${k}":{"value":1,"updated_at":"${AT}"}`).join(',')}}}`, /MAX_KEYS_PER_PLAYER/],
    ['too many bytes', `{"userId":"1","version":1,"data":{"a":{"value":"${'x'.repeat(1000)}","updated_at":"${AT}"}}}`, /MAX_PLAYER_BYTES/],
    ['an empty key, which the API cannot address', `{"userId":"1","version":1,"data":{"":{"value":1,"updated_at":"${AT}"}}}`, /data\[""\]: a key is 1-128 characters/],
    ['a key of 129 characters', `{"userId":"1","version":1,"data":{"${'é'.repeat(129)}":{"value":1,"updated_at":"${AT}"}}}`, /a key is 1-128 characters/],
    ['version 2^53-1, which reads back rounded', `{"userId":"1","version":${Number.MAX_SAFE_INTEGER},"data":{}}`, /version must be a whole number from 0 to 4503599627370496/],
    ['a version past 2^52', `{"userId":"1","version":${MAX_IMPORTED_VERSION + 1},"data":{}}`, /version must be a whole number from 0 to/],
    ['a userId past the safe integers', '{"userId":9007199254740992,"version":1,"data":{}}', /userId/],
    ['an empty userId', '{"userId":"","version":1,"data":{}}', /userId/],
  ] as const) {
    it(`refuses ${name}`, () => {
      expect(() => parsePlayerLine(line, LIMITS)).to.throw(message);
    });
  }

  it('takes what the API takes: 128 characters counted as ajv counts them, and the largest version an import may set', () => {
    const emoji = '\u{1F600}'.repeat(128);
    const line = `{"userId":"1","version":${MAX_IMPORTED_VERSION},"data":{"${emoji}":{"value":1,"updated_at":"${AT}"}}}`;
    expect(parsePlayerLine(line, { ...LIMITS, maxPlayerBytes: 10_000 })).to.deep.include({ version: MAX_IMPORTED_VERSION, fields: [emoji, encodeEntry('1', MS)] });
  });

  it('judges keys exactly as the API\'s schema does', () => {
    const check = new Ajv({ strict: true }).compile(keySchema);
    for (const key of ['', 'a', 'x'.repeat(128), 'x'.repeat(129), 'é'.repeat(128), '\u{1F600}'.repeat(128), '\u{1F600}'.repeat(129), 'a\u0000', '\u007f', 'tab\t', '\ud800', ' ', '__proto__']) {
      expect(isDataKey(key), JSON.stringify(key)).to.equal(check(key));
    }
  });
});
