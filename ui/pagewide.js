// Page-wide behaviour, installed once per page by a component drawn on every page
// (ui/pagewide.py): browser history for the bound widgets, and the sidebar's navigation
// given roles that assistive technology reads right.
// Back / Forward (#44 item 4): Streamlit writes a bound widget's value into the URL with
// history.replaceState, so a change of layer, head, view, step or model made no history
// entry and Back left the app. A URL change of one of these parameters that follows the
// user's own input within a second is pushed as a new entry instead.
const HISTORY_KEYS = ["layer", "head", "view", "step", "model", "vs", "tview"];
const INPUT_MS = 1000;
function installHistory() {
  if (window.__attnvizHistory) return; // once per page
  window.__attnvizHistory = true;
  let input = -Infinity;
  const mark = () => (input = performance.now());
  for (const type of ["pointerdown", "keydown", "change"]) document.addEventListener(type, mark, true);
  // Back / Forward opens the entry's URL afresh: Streamlit's own handler reran the page
  // with it but emptied the sentence box (a widget whose value is not its default) and
  // left a view the URL no longer names; a new session reads every parameter of the link.
  // (The query token and an upload, not in the URL, start over.)
  const back = (event) => {
    event.stopImmediatePropagation();
    window.location.reload();
  };
  window.addEventListener("popstate", back, true); // before Streamlit's own handler
  const replace = window.history.replaceState.bind(window.history);
  window.history.replaceState = (state, title, url) => {
    const before = new URL(window.location.href);
    const after = url == null ? before : new URL(url, before);
    const changed = HISTORY_KEYS.some((k) => before.searchParams.get(k) !== after.searchParams.get(k));
    const fresh = performance.now() - input < INPUT_MS;
    if (changed && fresh && before.pathname === after.pathname) {
      return window.history.pushState(state, title, url);
    }
    return replace(state, title, url);
  };
}

// The sidebar's page list (#44 item 13): Streamlit draws <ul><div><header/><li/>…</div>…</ul>,
// a list whose items sit in <div>s (axe: "list" and "listitem", serious on every page).
// Drawn as what it is instead: a navigation of groups of links, each group named by its
// section's header. Streamlit may draw the list again: the roles are set again then.
function navigationRoles() {
  const list = document.querySelector('[data-testid="stSidebarNavItems"]');
  if (!list) return;
  list.setAttribute("role", "none");
  for (const item of list.querySelectorAll("li")) item.setAttribute("role", "none");
  for (const section of list.children) {
    const header = section.querySelector('[data-testid="stNavSectionHeader"]');
    if (section.tagName !== "DIV" || !header) continue;
    section.setAttribute("role", "group");
    section.setAttribute("aria-label", header.textContent.replace("expand_more", "").trim());
  }
}
function installNavigationRoles() {
  if (window.__attnvizNavRoles) return;
  window.__attnvizNavRoles = true;
  let pending = false;
  new MutationObserver(() => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      navigationRoles();
    });
  }).observe(document.body, { childList: true, subtree: true });
  navigationRoles();
}

export default function () {
  installHistory();
  installNavigationRoles();
}
