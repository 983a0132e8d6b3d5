// A time on the page: absolute with its zone (format.ts), machine-readable in `datetime`.
import { when } from "./format";

export function When({ iso }: { iso: string | undefined }) {
  if (!iso) return <>—</>;
  return <time dateTime={iso}>{when(iso)}</time>;
}
