"""What the pages measure on top of a loaded model, without Streamlit.

from model.analysis import attribute, logit_lens, patch, head_roles
from model.analysis import patch_grid, patched_translation   (patching, cell by cell and as a translation)
"""

from .attribution import METHODS, attribute
from .lens import logit_lens
from .patching import patch, patch_grid, patched_translation
from .roles import head_roles

__all__ = ["METHODS", "attribute", "head_roles", "logit_lens", "patch", "patch_grid", "patched_translation"]
