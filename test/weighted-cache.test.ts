import { expect, test } from 'bun:test'
import { WeightedCache } from '../src/lib/weighted-cache'

test('bounded by weight, least recently used first out; a value heavier than a quarter of the bound is not kept', () => {
  const cache = new WeightedCache<string>(12, (v) => v.length)
  cache.set('a', 'aaa')
  cache.set('b', 'bbb')
  cache.set('c', 'ccc')
  expect(cache.get('a')).toBe('aaa') // a is now the most recently used
  cache.set('d', 'ddd')
  cache.set('e', 'eee') // 15 > 12: b, the least recently used, goes
  expect(cache.get('b')).toBeUndefined()
  expect(['a', 'c', 'd', 'e'].map((k) => cache.get(k))).toEqual(['aaa', 'ccc', 'ddd', 'eee'])
  cache.set('big', 'xxxx')
  expect(cache.get('big')).toBeUndefined()
  cache.set('a', 'A') // replacing a value counts its new weight only
  expect(cache.get('a')).toBe('A')
  expect(cache.get('c')).toBe('ccc')
})
