"""What every page shares and nothing draws: the menu (nav), the byte-bounded caches (cache), computations
cached by their inputs (cached): the model and its runs (engine), the explanations (explanations) and the
experiments (experiments); figures shared across sessions (figures), and turns for long texts (turns).

Imports model/, viz/ and views/ (the controls as plain values and their URL round trip are views.controls),
and nothing else of ui/."""
