// The harness's private directories that no agent may read or write (the embedded server's data
// directory, among others): modules that create one register it here, and every agent namespace
// started while it is registered mounts an empty, inaccessible filesystem over it.
const registered = new Set<string>();

/** Registers a directory as harness-private; the returned function unregisters it. */
export function registerPrivatePath(path: string): () => void {
  registered.add(path);
  return () => {
    registered.delete(path);
  };
}

/** The directories registered right now. */
export function privatePaths(): string[] {
  return [...registered];
}
