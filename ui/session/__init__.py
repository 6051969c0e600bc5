"""What every page shares and nothing draws: the controls as plain values and their URL round trip
(urlstate), the menu (nav), the byte-bounded caches (cache), the cached engine calls (engine), figures
shared across sessions (figures), and turns for long texts (turns).

Imports model/ and viz/, and nothing else of ui/."""
