/**
 * The passkey library, loaded by webauthn.ts on the first passkey ceremony a container serves: with
 * asn1js and @peculiar/x509 it is a heavy chunk that the reads of this function never need
 * (bench/results.json has the sizes).
 */
export { generateAuthenticationOptions, generateRegistrationOptions, verifyAuthenticationResponse, verifyRegistrationResponse } from '@simplewebauthn/server';
