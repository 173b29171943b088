import { describe, expect, it } from 'vitest';
import { ConnectionGate, normalizeAddress } from './admission';

describe('the gate for unauthenticated connections', () => {
  it('admits up to the per-address cap from one address and up to the total from all', () => {
    const gate = new ConnectionGate({ total: 5, perAddress: 2 });
    const a = [gate.admit('10.0.0.1'), gate.admit('10.0.0.1'), gate.admit('10.0.0.1')];
    expect(a.map((t) => t !== null)).toEqual([true, true, false]);
    const b = [gate.admit('10.0.0.2'), gate.admit('10.0.0.2'), gate.admit('10.0.0.3'), gate.admit('10.0.0.4')];
    expect(b.map((t) => t !== null)).toEqual([true, true, true, false]);
    expect(gate.pending).toBe(5);
  });

  it('gives a place back once, however often it is released', () => {
    const gate = new ConnectionGate({ total: 2, perAddress: 1 });
    const ticket = gate.admit('10.0.0.1')!;
    expect(gate.admit('10.0.0.1')).toBeNull();
    ticket.release();
    ticket.release();
    expect(gate.pending).toBe(0);
    expect(gate.admit('10.0.0.1')).not.toBeNull();
    expect(gate.admit('10.0.0.2')).not.toBeNull();
    expect(gate.admit('10.0.0.3')).toBeNull();
  });

  it.each([
    ['::ffff:10.0.0.1', '10.0.0.1'],
    ['::FFFF:10.0.0.1', '10.0.0.1'],
    ['2001:DB8::1', '2001:db8::1'],
    [undefined, 'unknown'],
  ])('counts %s as %s', (address, key) => expect(normalizeAddress(address)).toBe(key));

  it('counts an IPv4 address the same whether it came over IPv4 or IPv6', () => {
    const gate = new ConnectionGate({ total: 10, perAddress: 1 });
    expect(gate.admit('10.0.0.1')).not.toBeNull();
    expect(gate.admit('::ffff:10.0.0.1')).toBeNull();
  });
});
