/** Cookie names and serialisation live with the sessions that set them (domain/auth/cookies.ts). */
export * from '#domain/auth/cookies';
