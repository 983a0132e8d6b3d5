// The session's theme applied through the CSSOM: the CSP forbids inline styles, not
// custom properties set from a script served by 'self'.
export interface Theme {
  brandColor?: string;
  logoUrl?: string;
}

export function applyTheme(theme: Theme | undefined) {
  if (theme?.brandColor && /^#[0-9a-fA-F]{6}$/.test(theme.brandColor)) {
    document.documentElement.style.setProperty("--brand", theme.brandColor);
  }
}
