/**
 * A package loaded where it is first used rather than with the process (sharp, roslib, onnxruntime-web:
 * each costs a process that never uses it CPU at start). The import is passed as a function so bundlers
 * still see its specifier. A failed load rejects with a message that names the package and what to do,
 * the loader's own first line in brackets and the original error as its cause.
 */
export async function loadPackage<T>(load: () => Promise<T>, what: string): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new Error(`${what} could not be loaded (${reason}); is the installation complete (npm ci) and built for this platform?`, { cause: error });
  }
}
