/**
 * The console's shell: a hash router (`#/runs/run_...`), the navigation for what the key may do,
 * and the page lifecycle. Each page is `async (ctx) => void` rendering into `ctx.view`; leaving a page
 * aborts `ctx.signal` (its requests and event streams) and runs what it passed to `ctx.cleanup`.
 */
import { configureApi } from "./api.js";
import { h, replace } from "./dom.js";
import { can, currentCapabilities, homeOf, sessionKey, signOut } from "./session.js";
import { errorBox } from "./ui.js";
import { cellPage } from "./pages/cell.js";
import { comparePage } from "./pages/compare.js";
import { fleetPage } from "./pages/fleet.js";
import { stationPage } from "./pages/station.js";
import { keysPage } from "./pages/keys.js";
import { kitPage, kitsPage } from "./pages/kits.js";
import { newRunPage } from "./pages/new-run.js";
import { runPage } from "./pages/run.js";
import { runsPage } from "./pages/runs.js";
import { signInPage } from "./pages/sign-in.js";
import { taskPage, tasksPage } from "./pages/tasks.js";
import { usagePage } from "./pages/usage.js";
import { leaderboardPage, leaderboardsPage } from "./pages/leaderboards.js";

const ROUTES = [
  { pattern: /^\/sign-in$/, page: signInPage, open: true },
  { pattern: /^\/runs$/, page: runsPage },
  { pattern: /^\/runs\/new$/, page: newRunPage },
  { pattern: /^\/runs\/([\w-]+)$/, page: runPage },
  { pattern: /^\/compare$/, page: comparePage },
  { pattern: /^\/tasks$/, page: tasksPage },
  { pattern: /^\/tasks\/([\w@.-]+)$/, page: taskPage },
  { pattern: /^\/kits$/, page: kitsPage },
  { pattern: /^\/kits\/([\w-]+)$/, page: kitPage },
  { pattern: /^\/usage$/, page: usagePage },
  { pattern: /^\/keys$/, page: keysPage },
  { pattern: /^\/fleet$/, page: fleetPage },
  { pattern: /^\/fleet\/([\w-]+)$/, page: cellPage },
  { pattern: /^\/station$/, page: stationPage },
  // Public data: shown signed in or not.
  { pattern: /^\/leaderboards$/, page: leaderboardsPage, open: true },
  { pattern: /^\/leaderboards\/([\w-]+)$/, page: leaderboardPage, open: true },
];

/** Navigation entries and who sees them. */
const NAV = [
  { path: "/runs", label: "Runs", show: (caps) => can(caps, "runs:read") },
  { path: "/runs/new", label: "New run", show: (caps) => can(caps, "runs:write") },
  { path: "/tasks", label: "Tasks", show: (caps) => can(caps, "runs:read") },
  { path: "/kits", label: "Kits", show: (caps) => can(caps, "runs:read") },
  { path: "/usage", label: "Usage", show: (caps) => can(caps, "runs:read") },
  { path: "/keys", label: "API keys", show: (caps) => can(caps, "keys:admin") },
  { path: "/fleet", label: "Fleet", show: (caps) => caps?.operator },
  { path: "/station", label: "Station", show: (caps) => caps?.operator },
  { path: "/leaderboards", label: "Leaderboards", show: () => true },
];

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const who = document.getElementById("who");
let leaving = null;
let firstRender = true;

/** Goes to a console path, e.g. `navigate("/runs/run_x")`. */
export function navigate(path, { replace: replaceEntry = false } = {}) {
  const hash = `#${path}`;
  if (replaceEntry) {
    history.replaceState(null, "", hash);
    void route();
  } else if (location.hash === hash) {
    void route();
  } else {
    location.hash = hash;
  }
}

function parseHash() {
  const raw = location.hash.startsWith("#/") ? location.hash.slice(1) : "/";
  const [path, search = ""] = raw.split("?");
  return { path: decodeURIComponent(path) || "/", query: new URLSearchParams(search) };
}

function renderChrome(caps, path) {
  // Signed out, only the public pages are offered.
  replace(nav, h("ul", {}, NAV.filter((item) => (caps ? item.show(caps) : item.path === "/leaderboards")).map((item) => {
    const current = path === item.path || (item.path !== "/runs" && path.startsWith(`${item.path}/`)) || (item.path === "/runs" && /^\/runs\/(?!new$)/.test(path));
    return h("li", {}, h("a", { href: `#${item.path}`, "aria-current": current ? "page" : false }, item.label));
  })));
  replace(who, caps ? [
    h("span", { class: "muted" }, caps.hint ? `Key ${caps.hint}` : "Signed in"),
    " ",
    h("button", { type: "button", on: { click: () => { signOut(); navigate("/sign-in"); } } }, "Sign out"),
  ] : null);
}

async function route() {
  const { path, query } = parseHash();
  if (leaving) leaving();
  const controller = new AbortController();
  const cleanups = [];
  leaving = () => {
    controller.abort();
    for (const fn of cleanups.splice(0)) {
      try { fn(); } catch { /* a cleanup must not stop the next page */ }
    }
  };
  const view = h("div", { class: "view" });
  replace(main, view);
  delete main.dataset.route;
  main.setAttribute("aria-busy", "true");

  let caps = null;
  if (sessionKey()) {
    try {
      caps = await currentCapabilities();
    } catch (error) {
      if (error.code !== "invalid_api_key") {
        document.title = "Assay";
        replace(view, h("h1", { tabindex: "-1" }, "The console could not start"), errorBox(error));
        main.removeAttribute("aria-busy");
        return;
      }
      signOut();
    }
  }
  if (controller.signal.aborted) return;
  const match = ROUTES.map((r) => ({ r, m: r.pattern.exec(path) })).find((x) => x.m);
  if (!caps && !match?.r.open) {
    navigate(`/sign-in${path !== "/" && path !== "/sign-in" ? `?next=${encodeURIComponent(path)}` : ""}`, { replace: true });
    return;
  }
  if (path === "/") {
    navigate(homeOf(caps), { replace: true });
    return;
  }
  renderChrome(caps, path);
  const ctx = {
    view,
    /** Puts the page's content in place (nodes, text, arrays; null and false are skipped). */
    show: (...children) => replace(view, ...children),
    params: match ? match.m.slice(1) : [],
    query,
    caps,
    signal: controller.signal,
    setTitle: (title) => { document.title = `${title} · Assay`; },
    cleanup: (fn) => cleanups.push(fn),
    navigate,
    reload: () => route(),
  };
  try {
    if (!match) {
      ctx.setTitle("Not found");
      replace(view, h("h1", { tabindex: "-1" }, "Not found"), h("p", {}, "The console has no page at ", h("code", {}, path), ". ", h("a", { href: `#${homeOf(caps)}` }, "Go to the start page"), "."));
    } else {
      await match.r.page(ctx);
    }
  } catch (error) {
    // A page that could not load its data (an unknown id, a key without the scope) still gets a heading.
    if (!controller.signal.aborted) {
      if (!view.querySelector("h1")) view.prepend(h("h1", { tabindex: "-1" }, error.code === "not_found" ? "Not found" : "This page could not be shown"));
      view.append(errorBox(error));
    }
  } finally {
    if (!controller.signal.aborted) main.removeAttribute("aria-busy");
  }
  if (controller.signal.aborted) return;
  // Which route is on screen, complete (for scripts driving the console, such as its browser test).
  main.dataset.route = path;
  // Moving focus to the new page's heading tells keyboard and screen reader users where they are.
  if (!firstRender) view.querySelector("h1")?.focus();
  firstRender = false;
}

configureApi({
  key: sessionKey,
  unauthorized: () => {
    // The key was revoked (or the coordinator forgot it) while the console was open.
    signOut();
    navigate("/sign-in?expired=1");
  },
});

// A deep link (/runs/run_x, served index.html by the coordinator) becomes the same hash route.
if (location.pathname !== "/") history.replaceState(null, "", `/#${location.pathname}${location.search}`);
document.getElementById("skip").addEventListener("click", (event) => {
  event.preventDefault();
  main.focus();
});
window.addEventListener("hashchange", () => void route());
void route();
