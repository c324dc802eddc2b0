import { config } from '#platform/config';
import { HttpError } from '../errors';
import { crossSiteReason } from '../request-guards';
import { type PipelineRequest, routeOf } from './request-state';

/** For the routes of `policy.sameOrigin` (sign-in, sign-up): a browser request from another site is refused (login CSRF). */
export function refuseCrossSite(request: PipelineRequest): void {
  if (!routeOf(request).policy?.sameOrigin) return;
  const why = crossSiteReason(request.internal.headers!, config().appUrl);
  if (why) throw new HttpError(403, `cross-site request refused: ${why}`, 'CROSS_SITE_REQUEST');
}
