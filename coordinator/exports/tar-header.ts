/**
 * Tar member headers, byte for byte as tar-stream 3's `pack` writes them for a regular file (the
 * exports' archives were written by it; `test/unit/export-tar-archive.spec.ts` compares the two): a
 * ustar header, the name split into prefix and name when it is over 100 bytes; a name that does not
 * fit or is not ASCII goes in a PAX extended header (`path=`), followed by the member's own header
 * named `PaxHeader`, as tar-stream names it. Sizes of 8 GiB and more are written in base-256.
 */

export const TAR_BLOCK = 512;
/** Two zero blocks end an archive; its prefixes are the padding after a member. Never written to. */
export const TAR_END: Uint8Array = new Uint8Array(2 * TAR_BLOCK);

export interface TarFileHeader {
  name: string;
  size: number;
  mode: number;
  mtime: Date;
}

/** The header blocks that precede a regular file's bytes. */
export function tarHeader(header: TarFileHeader): Uint8Array {
  const plain = ustarBlock(header.name, header.size, header.mode, header.mtime, "0");
  if (plain) return plain;
  const record = Buffer.from(paxRecord("path", header.name));
  const padded = Math.ceil(record.length / TAR_BLOCK) * TAR_BLOCK;
  const out = new Uint8Array(TAR_BLOCK + padded + TAR_BLOCK);
  out.set(ustarBlock("PaxHeader", record.length, header.mode, header.mtime, "x")!, 0);
  out.set(record, TAR_BLOCK);
  out.set(ustarBlock("PaxHeader", header.size, header.mode, header.mtime, "0")!, TAR_BLOCK + padded);
  return out;
}

/** One ustar block, or null when `path` needs a PAX header (not ASCII, or no split into name <= 100 and prefix <= 155 bytes). */
function ustarBlock(path: string, size: number, mode: number, mtime: Date, typeflag: "0" | "x"): Uint8Array | null {
  // ASCII only here, so lengths are byte lengths.
  if (Buffer.byteLength(path) !== path.length) return null;
  let name = path;
  let prefix = "";
  while (name.length > 100) {
    const slash = name.indexOf("/");
    if (slash === -1) return null;
    prefix += prefix ? "/" + name.slice(0, slash) : name.slice(0, slash);
    name = name.slice(slash + 1);
  }
  if (prefix.length > 155) return null;
  const block = Buffer.alloc(TAR_BLOCK);
  block.write(name, 0, "latin1");
  block.write(octal(mode & 0o7777, 6), 100, "latin1");
  block.write(octal(0, 6), 108, "latin1"); // uid
  block.write(octal(0, 6), 116, "latin1"); // gid
  if (size.toString(8).length > 11) {
    block[124] = 0x80;
    for (let i = 11, n = size; i > 0; i--, n = Math.floor(n / 0x100)) block[124 + i] = n % 0x100;
  } else {
    block.write(octal(size, 11), 124, "latin1");
  }
  block.write(octal((mtime.getTime() / 1000) | 0, 11), 136, "latin1");
  block.write(typeflag, 156, "latin1");
  block.write("ustar\u000000", 257, "latin1");
  block.write(octal(0, 6), 329, "latin1"); // devmajor
  block.write(octal(0, 6), 337, "latin1"); // devminor
  if (prefix) block.write(prefix, 345, "latin1");
  let sum = 8 * 32; // the checksum field itself counts as spaces
  for (let i = 0; i < TAR_BLOCK; i++) if (i < 148 || i >= 156) sum += block[i]!;
  block.write(octal(sum, 6), 148, "latin1");
  return block;
}

/** `n` in octal, zero-padded to `digits`, then a space; all sevens when it does not fit (as tar-stream does). */
function octal(n: number, digits: number): string {
  const text = n.toString(8);
  return (text.length > digits ? "7".repeat(digits) : text.padStart(digits, "0")) + " ";
}

/** A PAX record `<length> <key>=<value>\n`, the length counting itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  const len = Buffer.byteLength(body);
  let digits = Math.floor(Math.log(len) / Math.log(10)) + 1;
  if (len + digits >= Math.pow(10, digits)) digits++;
  return `${len + digits}${body}`;
}
