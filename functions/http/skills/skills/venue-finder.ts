import type * as z from 'zod/mini';
import { venueFinderActions as bodies, type VenueEntry } from '#contract/skill-actions/events';
import { listVenues } from '#data/skills/finder-catalogues';
import { action, type SkillModule } from '#domain/skills/skill-module';

type Venue = z.infer<ReturnType<typeof VenueEntry>>;
const same = (a: string, b: string | undefined) => b === undefined || a.toLowerCase() === b.toLowerCase();

/** Venues of the operator's catalogue that match every filter: holds at least `capacity`, costs at most `maxPrice`. Cheapest first. */
export const searchVenues = (venues: Venue[], f: z.infer<ReturnType<typeof bodies>['search']>) =>
  venues
    .filter((v) => same(v.city, f.city) && same(v.type, f.type))
    .filter((v) => (f.capacity === undefined || v.capacity >= f.capacity) && (f.maxPrice === undefined || v.price <= f.maxPrice))
    .sort((a, b) => a.price - b.price || a.name.localeCompare(b.name));

export const skill: SkillModule = {
  name: 'venue-finder',
  actions: {
    search: action(bodies().search, async (_call, body) => {
      const venues = searchVenues(await listVenues<Venue>(), body);
      return { venues, count: venues.length };
    }),
  },
};
