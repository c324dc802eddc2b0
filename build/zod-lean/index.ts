import * as z from './api';

export * from './api';
export { z, z as default };
