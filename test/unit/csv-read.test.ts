/**
 * Reading an import file whose stream failed before the reading began (a
 * multipart body cut short is refused by the multipart parser as soon as it
 * arrives): the reading ends with that failure at once instead of waiting for
 * bytes that never come.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { readRecords } from '../../src/domain/csv/csv-rows.ts';
import { ApiError } from '../../src/domain/errors.ts';

/** A stream that has already failed or closed, its events delivered, before anyone reads it. */
async function brokenBefore(end: (stream: Readable) => void): Promise<Readable> {
  const stream = new Readable({ read() {} });
  stream.on('error', () => {});
  end(stream);
  await new Promise((resolve) => setImmediate(resolve));
  return stream;
}

describe('reading a CSV body that broke before it was read', () => {
  it('rejects with the stream’s own error', async () => {
    const body = await brokenBefore((s) => s.destroy(new Error('Unexpected end of form')));
    await assert.rejects(readRecords(body, []), /Unexpected end of form/);
  });

  it('a body closed without an error is a file that broke off (400)', async () => {
    const body = await brokenBefore((s) => s.destroy());
    await assert.rejects(readRecords(body, []), (err: unknown) => err instanceof ApiError && err.statusCode === 400 && /broke off/.test(err.message));
  });

  it('a whole body is still read', async () => {
    const problems: never[] = [];
    const { records } = await readRecords(Readable.from(['channels,content\nNews,Hello\n']), problems);
    assert.deepEqual(
      records.map((r) => r.line),
      [2],
    );
  });
});

describe('reading a CSV body whose quote never closes', () => {
  // The whole body in one chunk: the parser reads the header and fails at the end in one go,
  // before a consumer that iterates would have taken the header from its buffer.
  it('reads the header, then names the line the broken row starts on', async () => {
    const problems: { line: number; message: string }[] = [];
    const { records, whole } = await readRecords(Readable.from([Buffer.from('channels,content\nx,"never closed\n')]), problems as never[]);
    assert.deepEqual(records, []);
    assert.equal(whole, false);
    assert.deepEqual(
      problems.map((p) => p.line),
      [2],
    );
    assert.match(problems[0].message, /not valid CSV/);
  });
});
