import { describe, expect, it } from 'vitest';
import { createSiweMessage } from 'viem/siwe';
import { parseSiweMessage, SiweRejectedError } from '#domain/auth/siwe';

// viem's parser is lenient (fields matched anywhere, any address case); these hold it to the
// strictness of the EIP-4361 reference grammar it replaced.
const ADDRESS = '0x5B38Da6a701c568545dCfcB03FcB875f56beddC4';
const valid = createSiweMessage({
  address: ADDRESS,
  chainId: 8453,
  domain: 'app.example.com',
  uri: 'https://app.example.com/signin',
  version: '1',
  statement: 'Sign in to the agent platform.',
  nonce: 'k8Jd2mQp7XrT4vLz',
  issuedAt: new Date('2025-01-15T10:00:00.000Z'),
  expirationTime: new Date('2025-01-15T10:10:00.000Z'),
});

const rejects = (text: string) => expect(parseSiweMessage(text)).rejects.toThrow(SiweRejectedError);

describe('parseSiweMessage', () => {
  it('reads every field of a well-formed message', async () => {
    expect(await parseSiweMessage(valid)).toEqual({
      address: ADDRESS,
      domain: 'app.example.com',
      uri: 'https://app.example.com/signin',
      chainId: 8453,
      nonce: 'k8Jd2mQp7XrT4vLz',
      issuedAt: '2025-01-15T10:00:00.000Z',
      expirationTime: '2025-01-15T10:10:00.000Z',
      notBefore: undefined,
      scheme: undefined,
    });
  });

  it('accepts a message without a statement, with a scheme, and RFC 3339 times in other forms', async () => {
    const bare = createSiweMessage({
      address: ADDRESS,
      chainId: 8453,
      domain: 'app.example.com',
      scheme: 'https',
      uri: 'https://app.example.com',
      version: '1',
      nonce: 'abcdefgh1234',
      issuedAt: new Date('2025-01-15T10:00:00.000Z'),
    });
    expect((await parseSiweMessage(bare)).scheme).toBe('https');
    const offset = bare.replace('Issued At: 2025-01-15T10:00:00.000Z', 'Issued At: 2025-01-15T11:00:00+01:00');
    expect((await parseSiweMessage(offset)).issuedAt).toBe('2025-01-15T10:00:00.000Z');
  });

  it.each([
    ['plain text', 'not a SIWE message'],
    ['an address not in EIP-55 checksum case', valid.replace(ADDRESS, ADDRESS.toLowerCase())],
    ['a wrong checksum', valid.replace(ADDRESS, ADDRESS.replace('B38Da', 'b38dA'))],
    ['version 2', valid.replace('Version: 1', 'Version: 2')],
    ['a short nonce', valid.replace('Nonce: k8Jd2mQp7XrT4vLz', 'Nonce: k8Jd')],
    ['text before the header', `hello\n${valid}`],
    ['a line added after the fields', `${valid}\nExtra: field`],
    ['a line inserted between the fields', valid.replace('Version: 1\n', 'Version: 1\nSurprise: yes\n')],
    ['a multi-line statement', valid.replace('Sign in to the agent platform.', 'Sign in\nto the agent platform.')],
    ['fields out of order', valid.replace('Version: 1\nChain ID: 8453', 'Chain ID: 8453\nVersion: 1')],
    ['a missing nonce', valid.replace('Nonce: k8Jd2mQp7XrT4vLz\n', '')],
    ['a missing Issued At', valid.replace(/Issued At: .*\n/, '')],
    ['an impossible date', valid.replace('Issued At: 2025-01-15T10:00:00.000Z', 'Issued At: 2025-13-45T10:00:00.000Z')],
    ['a date that is not RFC 3339', valid.replace('Issued At: 2025-01-15T10:00:00.000Z', 'Issued At: Jan 15 2025')],
    ['a URI that is not a URI', valid.replace('URI: https://app.example.com/signin', 'URI: not a uri')],
  ])('rejects %s', (_label, text) => rejects(text));
});
