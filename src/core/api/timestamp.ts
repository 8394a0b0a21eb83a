// Kubernetes' timestamp format, shared by the API server's own fields and the components that write conditions and events.

/** Kubernetes timestamps are RFC 3339 with second precision. */
export function timestamp(now: Date): string {
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
