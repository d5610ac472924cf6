import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tables, type ChangeSignal, type Tables } from '../../src/db/changes.ts';
import { ReadCache } from '../../src/db/read-cache.ts';

/** A signal moved by hand: `generation` of a table set is the changes made to those tables. */
function handSignal() {
  const changes: Tables[] = [];
  let following = true;
  const signal: ChangeSignal = {
    generation: (set) => (following ? changes.filter((c) => c & set).length : undefined),
    changed: (set) => void changes.push(set),
    close: async () => {},
  };
  return { signal, stopFollowing: () => (following = false) };
}

/** A loader that counts its reads. */
function counted<V>(value: V) {
  const load = async () => {
    load.reads++;
    return value;
  };
  load.reads = 0;
  return load;
}

describe('ReadCache', () => {
  it('serves from memory until a table it reads from changes; changes elsewhere leave it', async () => {
    const { signal } = handSignal();
    const cache = new ReadCache<string>(signal, tables('posts', 'channels'), { entries: 10 });
    const load = counted('list');
    await cache.get('a', load);
    await cache.get('a', load);
    assert.equal(load.reads, 1);
    signal.changed(tables('api_keys'));
    await cache.get('a', load);
    assert.equal(load.reads, 1, 'an API key change does not touch post lists');
    signal.changed(tables('channels'));
    await cache.get('a', load);
    assert.equal(load.reads, 2);
  });

  it('reads every time while changes cannot be followed', async () => {
    const { signal, stopFollowing } = handSignal();
    const cache = new ReadCache<string>(signal, tables('posts'), { entries: 10 });
    const load = counted('list');
    await cache.get('a', load);
    stopFollowing();
    await cache.get('a', load);
    await cache.get('a', load);
    assert.equal(load.reads, 3);
  });

  it('keeps at most the total size given, dropping the oldest, and never a value larger than that', async () => {
    const { signal } = handSignal();
    const cache = new ReadCache<string>(signal, tables('posts'), { entries: 100, total: { sizeOf: (v) => v.length, most: 10 } });
    const loads = { a: counted('aaaa'), b: counted('bbbb'), c: counted('cccc'), big: counted('x'.repeat(11)) };
    for (const key of ['a', 'b', 'c'] as const) await cache.get(key, loads[key]);
    // a + b + c is 12 characters: a, the oldest, had to go (and b, to take a back).
    for (const key of ['c', 'b', 'a'] as const) await cache.get(key, loads[key]);
    assert.deepEqual([loads.a.reads, loads.b.reads, loads.c.reads], [2, 1, 1]);
    assert.equal(await cache.get('big', loads.big), 'x'.repeat(11));
    await cache.get('big', loads.big);
    assert.equal(loads.big.reads, 2, 'too large to keep');
    await cache.get('c', loads.c);
    await cache.get('a', loads.a);
    assert.deepEqual([loads.a.reads, loads.c.reads], [2, 1], 'and the value too large pushed nothing out');
  });
});
