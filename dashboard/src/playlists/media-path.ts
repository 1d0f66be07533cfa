// The dashboard's route for a media's bytes (same origin, authorized by the session cookie).
export const mediaContentPath = (mediaId: string) => `/dashboard/v1/media/${encodeURIComponent(mediaId)}/content`;
