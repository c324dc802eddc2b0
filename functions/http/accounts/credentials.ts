import { forgotPassword, resetPassword } from './password-reset';
import { register } from './register';
import { getCsrfToken, signInWithCredentials, signOut } from './sign-in';
import type { AccountOperations } from './types';
import { resendVerificationEmail, verifyEmail } from './verify-email';

/** Email-and-password accounts: sign-up, sign-in, sign-out, CSRF token and password reset. */
export const credentialOperations: AccountOperations = {
  register,
  signInWithCredentials,
  signOut,
  getCsrfToken,
  forgotPassword,
  resetPassword,
  verifyEmail,
  resendVerificationEmail,
};
