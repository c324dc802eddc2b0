/** Version of the API document; bumped with every contract change that clients can see. */
export const API_VERSION = '0.1.0';
