/**
 * The methods paragraph of a report (issue 28 item 4): how the rates in it were estimated, in the
 * words of docs/statistics.md, with the references it cites. Only the methods the report's figures
 * actually used are described (an interval method named by a rate, a compare's or transfer's
 * difference method), so the paragraph can be pasted into a paper's methods section as it is.
 */

export interface MethodsText {
  paragraph: string;
  /** Full references, in the order first cited. */
  references: string[];
}

const REFERENCES = {
  wilson: "Wilson EB (1927). Probable inference, the law of succession, and statistical inference. J. Am. Statist. Assoc. 22:209-212.",
  newcombe98a: "Newcombe RG (1998a). Interval estimation for the difference between independent proportions: comparison of eleven methods. Stat. Med. 17:873-890.",
  newcombe98b: "Newcombe RG (1998b). Improved confidence intervals for the difference between binomial proportions based on paired data. Stat. Med. 17:2635-2650.",
  brown: "Brown LD, Cai TT, DasGupta A (2001). Interval estimation for a binomial proportion. Statist. Sci. 16:101-133.",
  turner2001: "Turner RM, Omar RZ, Thompson SG (2001). Bayesian methods of analysis for cluster randomized trials with binary outcome data. Stat. Med. 20:453-472.",
  turner2005: "Turner RM, Thompson SG, Spiegelhalter DJ (2005). Prior distributions for the intracluster correlation coefficient, based on multiple previous estimates, and their application in cluster randomized trials. Clin. Trials 2:108-118.",
  yan: "Yan X, Su XG (2010). Stratified Wilson and Newcombe confidence intervals for multiple binomial proportions. Stat. Biopharm. Res. 2:329-335.",
  clopper: "Clopper CJ, Pearson ES (1934). The use of confidence or fiducial limits illustrated in the case of the binomial. Biometrika 26:404-413.",
  mcnemar: "McNemar Q (1947). Note on the sampling error of the difference between correlated proportions or percentages. Psychometrika 12:153-157.",
  rover: "Röver C (2020). Bayesian random-effects meta-analysis using the bayesmeta R package. J. Statist. Software 93(6):1-51.",
  holm: "Holm S (1979). A simple sequentially rejective multiple test procedure. Scand. J. Statist. 6:65-70.",
} as const;

type RefKey = keyof typeof REFERENCES;

/** What the report used: its rates' interval methods, the prior when recorded, and the kind's sections. */
export interface MethodsInput {
  intervalMethods: readonly string[];
  /** The headline prior recorded with the result (`cells.prior`), when present. */
  prior?: { rate?: { parameters?: Record<string, number> }; icc?: { parameters?: Record<string, number> }; source?: string };
  /** A compare's or transfer's difference method (`comparison.method`, `gap.method`). */
  differenceMethod?: string;
  /** A paired compare's McNemar test was reported. */
  mcnemar?: boolean;
  /** A matrix's regressions were adjusted with Holm's procedure. */
  holm?: boolean;
  /** Stage or instruction rates (always Wilson) are printed. */
  diagnostics?: boolean;
}

const betaWords = (p?: Record<string, number>) => (p && p.a !== undefined && p.b !== undefined ? `Beta(${p.a}, ${p.b})` : undefined);

/** The paragraph and its references. */
export function methodsText(input: MethodsInput): MethodsText {
  const cited: RefKey[] = [];
  const cite = (...keys: RefKey[]) => {
    for (const key of keys) if (!cited.includes(key)) cited.push(key);
    return citeWords(keys);
  };
  const sentences: string[] = [
    "Each episode's outcome is the policy's own: an episode a person intervened in counts as a failure, and episodes a person marked invalid were run again and not counted.",
  ];
  const methods = new Set(input.intervalMethods);
  if (methods.has("beta-binomial-posterior")) {
    const rate = betaWords(input.prior?.rate?.parameters) ?? "Beta(0.5, 0.5)";
    const icc = betaWords(input.prior?.icc?.parameters) ?? "Beta(1, 9)";
    sentences.push(
      "Episodes ran on several physical cells, and outcomes on one cell are correlated, so each success rate is reported with the 95% equal-tailed posterior interval of the model-level rate "
      + "(the success rate of a new cell of this robot model) under a beta-binomial model of the cells "
      + `${cite("turner2001")}, with a ${rate} prior on the rate and a ${icc} prior on the intra-cell correlation ${cite("turner2005")}${input.prior?.source && input.prior.source !== "default" ? " (the correlation prior fitted from the fleet's earlier runs)" : ""}.`,
    );
  }
  if (methods.has("wilson") || input.diagnostics) {
    sentences.push(`${methods.has("wilson") ? "Rates marked Wilson" : "Stage and instruction rates"} use the Wilson score interval ${cite("wilson", "brown")}.`);
  }
  if (methods.has("stratified-wilson")) sentences.push(`Rates on the cells that ran, when cells ran unequal numbers of episodes, use the stratified Wilson interval ${cite("yan")}.`);
  if (methods.has("clopper-pearson")) sentences.push(`Exact intervals are Clopper-Pearson ${cite("clopper")}.`);
  const diff = input.differenceMethod;
  if (diff === "paired-cell-random-effects-posterior") {
    sentences.push(`The paired difference is the posterior of the model-level difference from within-cell paired differences with a cell-to-cell random effect ${cite("rover")}; about these cells alone, Newcombe's paired interval ${cite("newcombe98b")}.`);
  } else if (diff === "beta-binomial-posterior-difference") {
    sentences.push(`The difference of two model-level rates is the posterior of the difference, each rate under its own beta-binomial model of its cells ${cite("turner2001")}; about these cells alone, Newcombe's hybrid score interval ${cite("newcombe98a")}.`);
  } else if (diff === "newcombe-paired") {
    sentences.push(`The paired difference uses Newcombe's method 10 ${cite("newcombe98b")}.`);
  } else if (diff === "newcombe-hybrid-score") {
    sentences.push(`The difference uses Newcombe's hybrid score interval ${cite("newcombe98a")}.`);
  }
  if (input.mcnemar) sentences.push(`Discordant pairs are tested with the exact McNemar test ${cite("mcnemar")}.`);
  if (input.holm) sentences.push(`Regressions across the matrix's cells are adjusted for multiplicity with Holm's procedure ${cite("holm")}.`);
  return { paragraph: sentences.join(" "), references: cited.map((key) => REFERENCES[key]) };
}

/** "(Wilson 1927; Brown, Cai & DasGupta 2001)" from the references' authors and years. */
function citeWords(keys: readonly RefKey[]): string {
  return `(${keys.map((key) => authorYear(REFERENCES[key])).join("; ")})`;
}

function authorYear(reference: string): string {
  const match = /^(.*?) \((\d{4}[ab]?)\)/.exec(reference);
  if (!match) return reference;
  const authors = match[1].split(", ").map((a) => a.replace(/ [A-Z]+$/, ""));
  const names = authors.length > 2 ? `${authors[0]} et al.` : authors.join(" & ");
  return `${names} ${match[2]}`;
}
