#!/usr/bin/env node
/** `npx assay ...` from the repository: the command line of cli/ (cli/assay.mjs registers tsx and starts it). */
import "../cli/assay.mjs";
