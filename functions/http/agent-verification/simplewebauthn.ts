/**
 * The passkey library, loaded by webauthn.ts on the first passkey ceremony a container serves: with
 * asn1js and @peculiar/x509 it is ~250 KB that the reads of this function never need (issue 16).
 */
export { generateAuthenticationOptions, generateRegistrationOptions, verifyAuthenticationResponse, verifyRegistrationResponse } from '@simplewebauthn/server';
