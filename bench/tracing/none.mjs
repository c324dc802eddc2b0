/** Tracing bench, "none": the handler of an actively traced Lambda, where Lambda itself records the trace. */
export const handler = async () => ({ statusCode: 200 });
