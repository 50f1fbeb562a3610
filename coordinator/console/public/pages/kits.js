/**
 * Customer object kits: the list and a new kit (GET/POST /v1/kits), and one kit (GET /v1/kits/{id})
 * with its status history and its shipping label (GET /v1/kits/{id}/shipping-label gives a signed
 * link to the PDF, which needs no key).
 */
import { api, localPath } from "../api.js";
import { facts, field, h, replace } from "../dom.js";
import { when } from "../format.js";
import { can } from "../session.js";
import { badge, busy, errorSlot, table } from "../ui.js";

const STEPS = ["registered", "received", "tracked", "available"];

/** "2 x red mug" lines as kit items. */
function itemsOf(text) {
  return text.split("\n").map((line) => line.trim()).filter(Boolean).map((line) => {
    const m = /^(\d+)\s*[x×]\s*(.+)$/i.exec(line);
    return m ? { desc: m[2].trim(), qty: Number(m[1]) } : { desc: line, qty: 1 };
  });
}

export async function kitsPage(ctx) {
  ctx.setTitle("Kits");
  const { signal } = ctx;
  const kits = await api("/v1/kits", { signal });
  const errors = errorSlot();
  const name = h("input", { id: "kit-name", required: true, autocomplete: "off", pattern: "[a-z0-9]+(-[a-z0-9]+)*", maxlength: 64 });
  const items = h("textarea", { id: "kit-items", rows: 4, required: true, placeholder: "2 x red mug\n1 x wooden tray" });
  const register = h("button", { type: "submit", class: "primary" }, "Register kit");
  const form = h("form", { class: "card", on: { submit: (e) => {
    e.preventDefault();
    void busy(register, async () => {
      const kit = await api("/v1/kits", { method: "POST", json: { name: name.value.trim(), items: itemsOf(items.value) }, signal });
      ctx.navigate(`/kits/${kit.id}`);
    }, errors);
  } } },
    field("Name", name, "a-z, 0-9 and single hyphens; tasks use it as kit/<name> once the kit is available"),
    field("Items, one per line", items, "“2 x red mug”, or a description alone for one of it"),
    errors.element, h("div", { class: "actions" }, register));

  ctx.show(h("h1", { tabindex: "-1" }, "Kits"),
    table("Kits of this account, newest first", ["Kit", "Name", "Status", "Items", "Created"], kits.data.map((k) => [
      h("a", { href: `#/kits/${k.id}` }, k.id), k.name, badge(k.status), k.items.map((i) => `${i.qty} × ${i.desc}`).join(", "), when(k.created),
    ]), { empty: "No kits yet." }),
    can(ctx.caps, "runs:write") ? [h("h2", {}, "Register a kit"), form] : null);
}

export async function kitPage(ctx) {
  const { signal } = ctx;
  const kit = await api(`/v1/kits/${encodeURIComponent(ctx.params[0])}`, { signal });
  ctx.setTitle(`Kit ${kit.name}`);
  const errors = errorSlot();
  const labelOut = h("p", { "aria-live": "polite" });
  const label = h("button", { type: "button", on: { click: () => busy(label, async () => {
    const link = await api(localPath(kit.shipping_label_url), { signal });
    replace(labelOut, h("a", { href: localPath(link.url), target: "_blank", rel: "noopener" }, "Open the shipping label (PDF)"), ` · link valid until `, when(link.expires));
  }, errors) } }, "Get the shipping label");
  const reached = new Map(kit.status_history.map((s) => [s.status, s.at]));

  ctx.show(
    h("div", { class: "page-head" }, h("h1", { tabindex: "-1" }, `Kit ${kit.name}`), badge(kit.status)),
    h("section", { class: "card" }, facts([
      ["Id", h("code", {}, kit.id)],
      ["Items", h("ul", { class: "plain" }, kit.items.map((i) => h("li", {}, `${i.qty} × ${i.desc}`)))],
      ["Tracking", kit.tracking ? `${kit.tracking.mocap_markers} mocap markers, ${kit.tracking.mass_g} g, mesh scan ${kit.tracking.mesh_scan ? "yes" : "no"}${kit.tracking.dimensions_mm ? `, ${kit.tracking.dimensions_mm.join(" × ")} mm` : ""}` : "not tracked yet"],
      ["Tasks refer to it as", kit.environment_ref ? h("code", {}, kit.environment_ref) : "not available yet"],
      ["Registered", when(kit.created)],
    ])),
    h("section", { class: "card", "aria-labelledby": "h-history" },
      h("h2", { id: "h-history" }, "Status history"),
      h("ol", { class: "timeline" }, STEPS.map((step) => h("li", { class: reached.has(step) ? "done" : "todo" },
        h("strong", {}, step), " ", reached.has(step) ? when(reached.get(step)) : h("span", { class: "muted" }, "not yet"))))),
    h("section", { class: "card", "aria-labelledby": "h-label" },
      h("h2", { id: "h-label" }, "Shipping label"),
      h("p", {}, "Print it and put it on the box you send to the lab. The link is signed and valid for a day."),
      errors.element, h("div", { class: "actions" }, label), labelOut));
}
