// The text of a Kubernetes timestamp (metav1.Time), for every component that writes one.

/** Kubernetes timestamps are RFC 3339 with second precision. */
export function timestamp(now: Date): string {
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
