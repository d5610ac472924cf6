import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readableLine } from '../../src/lib/log.ts';

describe('log lines in a terminal', () => {
  it('reads as time, level, message and the fields as key=value', () => {
    const at = new Date(2026, 10, 25, 14, 2, 3).getTime();
    const json = JSON.stringify({
      level: 30,
      time: at,
      pid: 1,
      hostname: 'h',
      msg: 'post published',
      post: 'p1',
      network: 'x',
      ms: 532,
      err: { message: 'boom' },
    });
    assert.equal(readableLine(json), '14:02:03 INFO  post published post=p1 network=x ms=532 err={"message":"boom"}\n');
  });
  it('passes a line that is not JSON through', () => {
    assert.equal(readableLine('plain words'), 'plain words\n');
  });
});
