// Talks to gpudoctor watch: GET /api/v1/status (the `check --json` contract), /api/v1/findings,
// /api/v1/history, /api/v1/why. Every request has a timeout; a 401 asks the page for a token, which is kept in
// sessionStorage and sent as "Authorization: Bearer".

const TOKEN_KEY = "gpudoctor.token";
const TIMEOUT_MS = 5000;

export class AuthRequired extends Error {}

export function setToken(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

// A 404 the caller asked to see (getJson(path, { notFound: "throw" })): the daemon's message.
export class NotFound extends Error {}

// `notFound`: "null" (default: an endpoint this daemon does not serve) or "throw" (NotFound with
// the daemon's {"error": ...} message, e.g. a job the history does not know).
export async function getJson(path, { notFound = "null" } = {}) {
  const headers = { Accept: "application/json" };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = `Bearer ${token}`;
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), TIMEOUT_MS);
  try {
    const r = await fetch(path, { headers, signal: ctrl.signal, cache: "no-store" });
    if (r.status === 401 || r.status === 403) throw new AuthRequired(`${path}: HTTP ${r.status}`);
    if (r.status === 404 && notFound === "throw") throw new NotFound(await errorMessage(r, path));
    if (r.status === 404) return null; // an endpoint this daemon does not serve (e.g. no history)
    if (!r.ok) throw new Error(await errorMessage(r, path));
    return await r.json();
  } catch (e) {
    if (e.name === "AbortError") throw new Error(`${path}: no answer within ${TIMEOUT_MS / 1000} s`);
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

// "PATH: HTTP N: the daemon's message" (the JSON error body's "error", when there is one).
async function errorMessage(r, path) {
  let detail = "";
  try {
    const body = await r.json();
    if (body && typeof body.error === "string") detail = `: ${body.error}`;
  } catch {
    // not JSON: the status alone
  }
  return `${path}: HTTP ${r.status}${detail}`;
}
