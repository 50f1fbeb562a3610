/** `assay robots [--class <class>] [--tier <tier>]`: the robot models (GET /v1/robots) as a table. */
import type { Command } from "commander";
import type { CliRuntime } from "../command-context.js";
import { table } from "../human-format.js";

interface Robot {
  id: string;
  class: string;
  tier: string;
  dof: number;
  hands: string;
  firmwares: string[];
  cells: number;
  duty_cycle_pct: number;
}

export function registerRobots(program: Command, runtime: CliRuntime): void {
  program
    .command("robots")
    .description("list the robot models: class, tier, degrees of freedom, installed firmware, cells")
    .option("--class <class>", "only this class (humanoid, quadruped-manip, bimanual, mobile-manipulator, fixed-arm, arm-pod)")
    .option("--tier <tier>", "only this tier (soak, verify)")
    .action(
      runtime.action<[{ class?: string; tier?: string }]>(async (ctx, options) => {
        const answer = await ctx.api().json<{ data: Robot[] }>("GET", "/v1/robots", { query: { class: options.class, tier: options.tier } });
        if (ctx.json) return ctx.out.apiJson(answer.text);
        const robots = answer.data.data;
        if (robots.length === 0) return ctx.out.human("no robots match");
        ctx.out.human(
          table(
            [{ header: "ROBOT" }, { header: "CLASS" }, { header: "TIER" }, { header: "DOF", align: "right" }, { header: "HANDS" }, { header: "FIRMWARE" }, { header: "CELLS", align: "right" }, { header: "DUTY", align: "right" }],
            robots.map((r) => [r.id, r.class, r.tier, String(r.dof), r.hands, r.firmwares.join(" ") || "-", String(r.cells), `${r.duty_cycle_pct.toFixed(1)}%`]),
          ),
        );
      }),
    );
}
