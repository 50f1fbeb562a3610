/**
 * The account's API keys (keys:admin): GET /v1/keys, POST /v1/keys (the secret is shown once, here,
 * and kept nowhere), DELETE /v1/keys/{id} in two steps. The signed-in key cannot revoke itself.
 */
import { api } from "../api.js";
import { h, replace } from "../dom.js";
import { when } from "../format.js";
import { badge, busy, confirmButton, errorSlot, table } from "../ui.js";

const SCOPES = [
  ["runs:read", "read runs, results, episodes, tasks, kits, usage"],
  ["runs:write", "submit and cancel runs, tasks, kits"],
  ["streams:read", "watch live cameras"],
  ["data:purge", "delete a run's recordings"],
  ["keys:admin", "manage keys, budgets, webhooks"],
  ["calibration:export", "calibration exports"],
];

export async function keysPage(ctx) {
  ctx.setTitle("API keys");
  const { signal } = ctx;
  const errors = errorSlot();
  const listSlot = h("div", {});
  const created = h("div", { "aria-live": "polite" });
  const note = h("p", { class: "status-note", role: "status", tabindex: "-1" });

  async function load() {
    const keys = await api("/v1/keys", { signal });
    replace(listSlot, table("Keys of this account", ["Key", "Hint", "Scopes", "Created", "Status", ""], keys.data.map((k) => [
      k.id,
      h("code", {}, k.hint),
      k.scope.join(", "),
      when(k.created),
      k.revoked ? h("span", {}, badge("revoked"), " ", when(k.revoked)) : badge("active"),
      k.revoked ? "" : k.id === ctx.caps.keyId ? h("span", { class: "muted small" }, "the key you are signed in with") : confirmButton({
        label: "Revoke", question: `Revoke ${k.id}? Requests with it fail from now on.`, confirm: `Revoke ${k.id}`, slot: errors,
        action: async () => {
          await api(`/v1/keys/${k.id}`, { method: "DELETE", signal });
          await load();
          note.textContent = `Key ${k.id} was revoked.`;
          note.focus();
        },
      }),
    ])));
  }

  const boxes = SCOPES.map(([scope, what]) => h("label", { class: "check" }, h("input", { type: "checkbox", name: "scope", value: scope, checked: scope === "runs:read" }), ` ${scope} `, h("span", { class: "muted small" }, `(${what})`)));
  const createButton = h("button", { type: "submit", class: "primary" }, "Create key");
  const form = h("form", { class: "card", on: { submit } },
    h("fieldset", {}, h("legend", {}, "Scopes of the new key"), boxes),
    h("div", { class: "actions" }, createButton));

  async function submit(event) {
    event.preventDefault();
    const scope = boxes.map((b) => b.querySelector("input")).filter((i) => i.checked).map((i) => i.value);
    await busy(createButton, async () => {
      const key = await api("/v1/keys", { method: "POST", json: { scope }, signal });
      const secret = h("input", { id: "new-secret", class: "code secret", readonly: true, value: key.secret, "aria-describedby": "new-secret-note" });
      const copy = h("button", { type: "button", on: { click: async () => { await navigator.clipboard?.writeText(key.secret).catch(() => {}); secret.select(); copy.textContent = "Copied"; } } }, "Copy");
      replace(created, h("div", { class: "notice secret-box", role: "status" },
        h("h2", { tabindex: "-1" }, `Key ${key.id} created`),
        h("label", { for: "new-secret" }, "Secret"), h("div", { class: "row" }, secret, copy),
        h("p", { id: "new-secret-note" }, h("strong", {}, "Shown once. "), "Copy it now: Assay keeps only its hash and this page forgets it when you leave.")));
      created.querySelector("h2").focus();
      await load();
    }, errors);
  }
  ctx.cleanup(() => created.replaceChildren()); // the secret leaves the page with the user

  await load();
  ctx.show(h("h1", { tabindex: "-1" }, "API keys"), errors.element, note, created, listSlot, h("h2", {}, "Create a key"), form);
}
