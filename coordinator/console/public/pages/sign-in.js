/** Sign in with an API key. The key is checked against the API, then kept in this tab's sessionStorage only. */
import { h, field } from "../dom.js";
import { homeOf, signIn } from "../session.js";
import { busy, errorSlot, FormError } from "../ui.js";

export async function signInPage(ctx) {
  ctx.setTitle("Sign in");
  const input = h("input", { id: "api-key", name: "api-key", type: "password", autocomplete: "off", spellcheck: "false", required: true, placeholder: "asy_live_…" });
  const button = h("button", { type: "submit", class: "primary" }, "Sign in");
  const errors = errorSlot();
  const form = h("form", { class: "card narrow", on: { submit } },
    field("API key", input, "Kept in this browser tab only, until you sign out or close the tab. Never sent anywhere but this coordinator's API."),
    errors.element,
    h("div", { class: "actions" }, button));
  ctx.show(
    h("h1", { tabindex: "-1" }, "Sign in to Assay"),
    ctx.query.get("expired") ? h("p", { class: "notice", role: "status" }, "Your key is no longer accepted (revoked, or the coordinator was reset). Sign in with another key.") : null,
    ctx.caps ? h("p", { class: "notice" }, `You are signed in${ctx.caps.hint ? ` with ${ctx.caps.hint}` : ""}. Signing in with another key replaces it in this tab.`) : null,
    form,
    h("p", { class: "muted" }, "Customers see their runs, tasks, kits, usage and keys; operator keys also see the fleet. The first start of the coordinator prints an admin key and an operator key."));
  input.focus();

  async function submit(event) {
    event.preventDefault();
    const key = input.value.trim();
    if (!/^asy_live_\w{16,128}$/.test(key)) {
      errors.show(new FormError("An Assay API key starts with asy_live_ followed by letters and digits."));
      input.focus();
      return;
    }
    const caps = await busy(button, () => signIn(key), errors);
    if (!caps) {
      // Refused: the field keeps the key, selected, so typing replaces it.
      input.select();
      input.focus();
      return;
    }
    input.value = "";
    const next = ctx.query.get("next");
    ctx.navigate(next && next.startsWith("/") && next !== "/sign-in" ? next : homeOf(caps));
  }
}
