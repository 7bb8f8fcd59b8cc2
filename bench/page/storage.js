// Everything this origin keeps between visits, deleted and then counted again, so a first visit
// starts from nothing. (The HTTP cache is not the page's to clear: bench/browser.py clears it
// through the DevTools protocol before the visit.)

export async function originStorage() {
  const cacheNames = await caches.keys();
  const databases = indexedDB.databases ? (await indexedDB.databases()).map((d) => d.name) : [];
  const files = [];
  const root = await navigator.storage.getDirectory();
  for await (const name of root.keys()) files.push(name);
  return { cacheNames, databases, files };
}

function deleteDatabase(name) {
  return new Promise((resolve, reject) => {
    const request = indexedDB.deleteDatabase(name);
    request.onsuccess = () => resolve();
    request.onerror = () => reject(request.error);
    request.onblocked = () => resolve(); // another page holds it open; it goes once that closes
  });
}

// Deletes Cache Storage, IndexedDB and the origin private file system; returns what there was and
// what is left (all empty when it worked).
export async function clearOriginStorage() {
  const before = await originStorage();
  await Promise.all(before.cacheNames.map((name) => caches.delete(name)));
  await Promise.all(before.databases.map(deleteDatabase));
  const root = await navigator.storage.getDirectory();
  for (const name of before.files) await root.removeEntry(name, { recursive: true });
  return { before, after: await originStorage() };
}
