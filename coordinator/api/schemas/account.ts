/** The account (docs/api.md, "Account"): its leaderboard opt-in and display name. */
import { z } from "zod";
import { component, Timestamp } from "./common.js";

const nameMessage = "display_name must be 1..60 characters of letters, digits, spaces and . , _ - ' ( )";
export const DisplayName = z.string({ error: nameMessage }).trim().min(1, { error: nameMessage }).max(60, { error: nameMessage })
  .regex(/^[\p{L}\p{N} .,_'()-]+$/u, { error: nameMessage });

/** Body of PUT /v1/account. */
export const UpdateAccountRequest = z.strictObject({
  leaderboard: z.strictObject({
    opt_in: z.boolean({ error: "leaderboard.opt_in must be true or false" }),
    display_name: DisplayName.optional().describe("the name published results appear under; required the first time an account opts in"),
  }, { error: "leaderboard must be an object {opt_in, display_name?}" }),
}, { error: `request body must be a JSON object {"leaderboard": {"opt_in": true, "display_name": "..."}}` });

export const Account = component("Account", z.strictObject({
  object: z.literal("account"),
  id: z.string(),
  name: z.string(),
  created: Timestamp,
  leaderboard: z.strictObject({
    opt_in: z.boolean().describe("whether runs may publish to leaderboards; off hides the account's published entries (the runs stay)"),
    display_name: z.string().nullable().describe("the name published results appear under"),
  }),
}).describe("The calling key's account."));
