// Talks to gpudoctor watch: GET /api/v1/status (the `check --json` contract), /api/v1/findings,
// /api/v1/history. Every request has a timeout; a 401 asks the page for a token, which is kept in
// sessionStorage and sent as "Authorization: Bearer".

const TOKEN_KEY = "gpudoctor.token";
const TIMEOUT_MS = 5000;

export class AuthRequired extends Error {}

export function setToken(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export async function getJson(path) {
  const headers = { Accept: "application/json" };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = `Bearer ${token}`;
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), TIMEOUT_MS);
  try {
    const r = await fetch(path, { headers, signal: ctrl.signal, cache: "no-store" });
    if (r.status === 401 || r.status === 403) throw new AuthRequired(`${path}: HTTP ${r.status}`);
    if (r.status === 404) return null; // an endpoint this daemon does not serve (e.g. no history)
    if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`);
    return await r.json();
  } catch (e) {
    if (e.name === "AbortError") throw new Error(`${path}: no answer within ${TIMEOUT_MS / 1000} s`);
    throw e;
  } finally {
    clearTimeout(timer);
  }
}
