"""What the user sees: banners, live ipywidgets and the plain-text fallback."""
