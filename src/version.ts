// The stategate version: printed by --version, and part of every baseline cache key (a newer
// stategate may grade or record differently, so it never reuses an older one's episodes).
export const VERSION = '0.1.0';
