/**
 * The text a pdfkit PDF draws, read without a renderer (ISO 32000-1 sections 9.4 and 9.10): each
 * content stream's strings (`Tj`/`TJ` operands) decoded with the font selected by the last `Tf`, a
 * line break after each text object (`ET`). An embedded font (a Type0 font with Identity-H encoding,
 * as pdfkit writes for a font file) draws two-byte glyph ids, read back through the font's ToUnicode
 * CMap; a standard font draws one-byte WinAnsi codes, read as Latin-1. For tests that look for (or
 * must not find) a string in a PDF; a reader's view with layout is test/support/pdf-pages.ts.
 */
import { inflateSync } from "node:zlib";

interface PdfObject {
  dict: string;
  stream?: Buffer;
}

function objectsOf(pdf: Buffer): Map<string, PdfObject> {
  const raw = pdf.toString("latin1");
  const objects = new Map<string, PdfObject>();
  for (const match of raw.matchAll(/(\d+) 0 obj\b([\s\S]*?)endobj/g)) {
    const body = match[2];
    const at = body.search(/stream\r?\n/);
    if (at < 0) {
      objects.set(match[1], { dict: body });
      continue;
    }
    const start = match.index! + match[0].indexOf(body) + at + /stream\r?\n/.exec(body.slice(at))![0].length;
    const end = raw.lastIndexOf("endstream", match.index! + match[0].length);
    const bytes = pdf.subarray(start, end);
    let stream: Buffer;
    try {
      stream = /\/FlateDecode/.test(body.slice(0, at)) ? inflateSync(bytes) : Buffer.from(bytes);
    } catch {
      stream = Buffer.from(bytes);
    }
    objects.set(match[1], { dict: body.slice(0, at), stream });
  }
  return objects;
}

/** A ToUnicode CMap's code -> text (bfchar and bfrange entries, hex codes). */
function cmapOf(cmap: string): Map<number, string> {
  const map = new Map<number, string>();
  // pdfkit writes a ligature's text as several code units in one string: <0066 0069> for "fi".
  const utf16 = (hex: string) => Buffer.from(hex.replace(/\s+/g, ""), "hex").swap16().toString("utf16le");
  for (const block of cmap.matchAll(/beginbfchar([\s\S]*?)endbfchar/g)) {
    for (const [, code, text] of block[1].matchAll(/<([0-9a-fA-F]+)>\s*<([0-9a-fA-F\s]+)>/g)) map.set(parseInt(code, 16), utf16(text));
  }
  for (const block of cmap.matchAll(/beginbfrange([\s\S]*?)endbfrange/g)) {
    for (const [, lo, hi, rest] of block[1].matchAll(/<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]+)>\s*(\[[^\]]*\]|<[0-9a-fA-F]+>)/g)) {
      const first = parseInt(lo, 16);
      const last = parseInt(hi, 16);
      if (rest.startsWith("[")) {
        [...rest.matchAll(/<([0-9a-fA-F\s]+)>/g)].forEach(([, text], i) => map.set(first + i, utf16(text)));
      } else {
        const base = Buffer.from(rest.slice(1, -1), "hex").swap16().toString("utf16le");
        for (let code = first; code <= last; code++) map.set(code, String.fromCharCode(base.charCodeAt(0) + code - first));
      }
    }
  }
  return map;
}

type Decoder = (bytes: Buffer) => string;

/** Every text-drawing string of `pdf`, decoded; a line break after each text object. */
export function pdfDrawnText(pdf: Buffer): string {
  const objects = objectsOf(pdf);
  const decoders = new Map<string, Decoder>();
  for (const object of objects.values()) {
    for (const fonts of object.dict.matchAll(/\/Font\s*<<([^>]*)>>/g)) {
      for (const [, name, id] of fonts[1].matchAll(/\/([\w.-]+)\s+(\d+) 0 R/g)) {
        const font = objects.get(id)?.dict ?? "";
        const toUnicode = /\/ToUnicode (\d+) 0 R/.exec(font);
        if (/\/Subtype \/Type0/.test(font) && toUnicode) {
          const cmap = cmapOf(objects.get(toUnicode[1])?.stream?.toString("latin1") ?? "");
          decoders.set(name, (bytes) => {
            let text = "";
            for (let i = 0; i + 1 < bytes.length; i += 2) text += cmap.get(bytes.readUInt16BE(i)) ?? "\ufffd";
            return text;
          });
        } else {
          decoders.set(name, (bytes) => bytes.toString("latin1"));
        }
      }
    }
  }
  let drawn = "";
  for (const object of objects.values()) {
    const content = object.stream?.toString("latin1");
    if (!content || !/\bTf\b/.test(content) || /begincmap/.test(content)) continue;
    let decode: Decoder = (bytes) => bytes.toString("latin1");
    for (const token of content.matchAll(/\/([\w.-]+)\s+[\d.]+\s+Tf|<([0-9a-fA-F]*)>|\(((?:\\.|[^\\)])*)\)|\bET\b/g)) {
      if (token[1] !== undefined) decode = decoders.get(token[1]) ?? decode;
      else if (token[2] !== undefined) drawn += decode(Buffer.from(token[2], "hex"));
      else if (token[3] !== undefined) drawn += token[3];
      else drawn += "\n";
    }
  }
  return drawn;
}
