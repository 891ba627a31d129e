// The service's version: the interface specification's it implements (health, the OpenAPI document).
export const VERSION = '2.0.262';
