/**
 * A WOFF 1.0 font unpacked to the TrueType/OpenType (sfnt) file it wraps (W3C WOFF File Format 1.0,
 * sections 3-5): each table inflated once. fontkit reads a WOFF font by inflating a table on every
 * access, and pdfkit's subsetting reads the glyph table once per glyph, so embedding a WOFF font cost
 * seconds per document; the unpacked sfnt is read in place.
 */
import { inflateSync } from "node:zlib";

const WOFF_SIGNATURE = 0x774f4646; // "wOFF"
const HEADER_BYTES = 44;
const DIRECTORY_ENTRY_BYTES = 20;
const SFNT_RECORD_BYTES = 16;

/** The sfnt bytes of a WOFF 1.0 font; throws on anything else. */
export function sfntOfWoff(woff: Buffer): Buffer {
  if (woff.length < HEADER_BYTES || woff.readUInt32BE(0) !== WOFF_SIGNATURE) throw new Error("not a WOFF 1.0 font (signature wOFF)");
  const flavor = woff.readUInt32BE(4);
  const numTables = woff.readUInt16BE(12);
  const tables: Array<{ tag: number; checksum: number; data: Buffer }> = [];
  for (let i = 0; i < numTables; i++) {
    const at = HEADER_BYTES + i * DIRECTORY_ENTRY_BYTES;
    const tag = woff.readUInt32BE(at);
    const offset = woff.readUInt32BE(at + 4);
    const compLength = woff.readUInt32BE(at + 8);
    const origLength = woff.readUInt32BE(at + 12);
    const checksum = woff.readUInt32BE(at + 16);
    const stored = woff.subarray(offset, offset + compLength);
    const data = compLength < origLength ? inflateSync(stored) : Buffer.from(stored);
    if (data.length !== origLength) throw new Error(`WOFF table ${i} inflates to ${data.length} bytes; its directory says ${origLength}`);
    tables.push({ tag, checksum, data });
  }
  const log2 = Math.floor(Math.log2(Math.max(numTables, 1)));
  const searchRange = 2 ** log2 * 16;
  const pad4 = (n: number) => (n + 3) & ~3;
  let offset = 12 + numTables * SFNT_RECORD_BYTES;
  const size = tables.reduce((sum, t) => sum + pad4(t.data.length), offset);
  const out = Buffer.alloc(size);
  out.writeUInt32BE(flavor, 0);
  out.writeUInt16BE(numTables, 4);
  out.writeUInt16BE(searchRange, 6);
  out.writeUInt16BE(log2, 8);
  out.writeUInt16BE(numTables * 16 - searchRange, 10);
  // The WOFF directory is in ascending tag order, as the sfnt directory must be.
  for (const [i, table] of tables.entries()) {
    const record = 12 + i * SFNT_RECORD_BYTES;
    out.writeUInt32BE(table.tag, record);
    out.writeUInt32BE(table.checksum, record + 4);
    out.writeUInt32BE(offset, record + 8);
    out.writeUInt32BE(table.data.length, record + 12);
    table.data.copy(out, offset);
    offset += pad4(table.data.length);
  }
  return out;
}
