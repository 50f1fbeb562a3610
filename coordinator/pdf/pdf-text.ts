/**
 * Text made safe to lay out: pdfkit wraps a word wider than the line one piece at a time and
 * measures the whole rest of the word for every piece, so one unbroken string of n characters
 * costs n^2 (a 900,000-character kit item held the coordinator for minutes). `pdfText` cuts the
 * text at `maxChars` (ending "...") and breaks every unbroken run longer than `runChars` into
 * lines, which is where pdfkit would have wrapped it anyway; layout then grows linearly.
 */

/** Longest unbroken run laid out as one word; narrower than a line of the smallest page used (A6). */
export const PDF_RUN_CHARS = 32;

/** `text` as it is drawn: at most `maxChars` characters, long runs broken into lines of `runChars`. */
export function pdfText(text: string, maxChars: number, runChars = PDF_RUN_CHARS): string {
  const cut = text.length > maxChars ? `${text.slice(0, Math.max(0, maxChars - 3))}...` : text;
  return cut.replace(new RegExp(`\\S{${runChars + 1},}`, "g"), (run) => {
    const pieces: string[] = [];
    for (let i = 0; i < run.length; i += runChars) pieces.push(run.slice(i, i + runChars));
    return pieces.join("\n");
  });
}
