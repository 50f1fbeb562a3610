/**
 * The license a calibration export ships under: validation use only, for the named licensee and
 * purpose, for a year. Its terms (with the full text, the licensee embedded) go into the export's
 * license.json beside the SHA-256 of every data file; license.sig signs license.json's exact bytes
 * with the service's Ed25519 key, the key that signs frozen task specs (GET /v1/signing-keys).
 */
export const CALIBRATION_LICENSE_ID = "assay-calibration-validation/1.0" as const;
export const CALIBRATION_LICENSE_DAYS = 365;

export interface Licensee {
  name: string;
  contact: string;
}

export interface CalibrationLicense {
  id: typeof CALIBRATION_LICENSE_ID;
  licensor: "Assay";
  licensee: Licensee;
  purpose: string;
  simulator: string | null;
  runs: string[];
  use: "validation only";
  granted: string;
  expires: string;
  text: string;
}

function licenseText(l: Omit<CalibrationLicense, "text">): string {
  const day = (iso: string) => iso.slice(0, 10);
  return [
    `Assay calibration data license: validation use only (${l.id})`,
    "",
    `Licensor: Assay. Licensee: ${l.licensee.name} (${l.licensee.contact}).`,
    `Granted ${day(l.granted)} for this purpose: "${l.purpose}". Expires ${day(l.expires)}.`,
    `Data: ground truth recorded on Assay's physical cells in runs ${l.runs.join(", ")}, as shipped with this license.`,
    "",
    `1. Use. The licensee may use the data only to validate and calibrate a simulator${l.simulator ? ` (${l.simulator})` : ""} against the cells that recorded it, for the purpose above.`,
    "2. Not permitted: training or fine-tuning policies or other models on the data; redistributing, publishing, selling or sublicensing the data or any part of it; using it after the license expires.",
    "3. Attribution. Published results derived from the data cite the runs by their ids.",
    "4. Deletion. When the license expires, or at the licensor's request, the licensee deletes the data and every copy.",
    "5. Integrity. license.json lists every file of this export with its size and SHA-256; license.sig signs license.json's exact bytes with the licensor's Ed25519 key, published at GET /v1/signing-keys/<key_id>. A file that does not match is not licensed data.",
    "6. No warranty. The data is provided as recorded, without warranty of fitness for any purpose.",
    "",
  ].join("\n");
}

export function calibrationLicense(request: { runs: string[]; licensee: Licensee; purpose: string; simulator?: string | null }, granted: Date): CalibrationLicense {
  const expires = new Date(granted.getTime() + CALIBRATION_LICENSE_DAYS * 86_400_000);
  const terms = {
    id: CALIBRATION_LICENSE_ID, licensor: "Assay" as const, licensee: request.licensee, purpose: request.purpose, simulator: request.simulator ?? null,
    runs: request.runs, use: "validation only" as const, granted: granted.toISOString(), expires: expires.toISOString(),
  };
  return { ...terms, text: licenseText(terms) };
}
