import { describe, expect, it } from 'vitest';
import { Store } from '../../src/store';
import { usage } from './fixtures';

describe('Store', () => {
  it('gives the first question its session once the server names it', () => {
    const st = new Store();
    expect(st.hasSession).toBe(false);
    st.ask('hello');
    st.update({ sessionId: 'a', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hi' } } });
    st.asked('a');
    expect(st.current).toBe('a');
    expect(st.chat().items.map((i) => i.type)).toEqual(['user', 'agent']);
    st.setUsage(usage({ sessionId: 'a' }));
    expect(st.usage()?.percent).toBe(42.1);
  });
  it('keeps each session its transcript', () => {
    const st = new Store();
    st.ask('q');
    st.asked('a');
    st.switchTo('b');
    expect(st.chat().items).toEqual([]);
    st.switchTo('a');
    expect(st.chat().items.length).toBe(1);
  });
});
