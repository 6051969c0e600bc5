"""What the pages measure on top of a loaded model, without Streamlit.

    from model.analysis import attribute, logit_lens, patch, head_roles
"""

from .attribution import METHODS, attribute
from .lens import logit_lens
from .patching import patch
from .roles import head_roles

__all__ = ["METHODS", "attribute", "head_roles", "logit_lens", "patch"]
