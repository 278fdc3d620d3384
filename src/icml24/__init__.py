"""icml24: tested, importable reference implementations of ICML 2024 papers.

>>> import icml24
>>> "_template" in icml24.list_papers()
False
"""

from icml24.core.registry import get_paper, list_papers

__version__ = "0.1.0"
__all__ = ["__version__", "get_paper", "list_papers"]
