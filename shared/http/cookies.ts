/** Cookie names and serialisation live with the sessions that set them (shared/auth/cookies.ts). */
export * from '../auth/cookies';
