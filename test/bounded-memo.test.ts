import t from 'tap';
import { BoundedMemo } from '../src/bounded-memo.ts';

t.test('keeps values until a bound is passed, then drops the oldest first', async (t) => {
  const m = new BoundedMemo<string>(2, 10);
  m.set('a', 'A', 4);
  m.set('b', 'B', 4);
  t.same([m.get('a'), m.get('b')], ['A', 'B']);
  m.set('c', 'C', 1);
  t.same([m.get('a'), m.get('b'), m.get('c')], [undefined, 'B', 'C'], 'over two entries: the oldest goes');
  m.set('d', 'D', 10);
  t.same([m.get('b'), m.get('c'), m.get('d')], [undefined, undefined, 'D'], 'over the size: as many as it takes go');
});

t.test('a value larger than the size bound is not kept; setting a key again makes it the newest', async (t) => {
  const m = new BoundedMemo<number>(2, 10);
  m.set('big', 1, 11);
  t.equal(m.get('big'), undefined);
  m.set('a', 1, 5);
  m.set('b', 2, 5);
  m.set('a', 3, 5);
  m.set('c', 4, 5);
  t.same([m.get('a'), m.get('b'), m.get('c')], [3, undefined, 4], 'a again was newer than b');
  m.delete('a');
  m.set('d', 5, 5);
  t.same([m.get('c'), m.get('d')], [4, 5], 'a deleted key frees its size');
});
