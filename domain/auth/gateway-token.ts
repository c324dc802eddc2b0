import { isGatewayToken } from '#data/instances';

/** Whether `Authorization: Bearer <token>` carries the account's instance gateway token. */
export async function presentsGatewayToken(userId: string, authorization: string | undefined): Promise<boolean> {
  const token = authorization && /^bearer\s+/i.test(authorization) ? authorization.replace(/^bearer\s+/i, '').trim() : '';
  return !!token && (await isGatewayToken(userId, token));
}
