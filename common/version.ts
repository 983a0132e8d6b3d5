import { readFileSync } from "node:fs";
import { fromRoot } from "./paths.js";

/** The product version, from package.json. */
export const VERSION: string = JSON.parse(readFileSync(fromRoot("package.json"), "utf8")).version;
