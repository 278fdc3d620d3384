"""The paper card: bibliographic facts about a paper, importable without numpy or torch."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class PaperCard:
    """Who wrote the paper, where it is, and what it is about.

    Attributes:
        slug: the package name under ``icml24.papers`` (e.g. ``"moe_gating"``).
        number: the paper's position in ``seeds/icml2024_abstracts.txt`` (1-19).
        title: the paper's title.
        authors: author names in paper order.
        arxiv: arXiv identifier, if any.
        official_code: URL of the authors' code, if any.
        tags: a few topic words.
        summary: one or two sentences on the claim, for the report's index.
        extra: the pyproject extra that provides the paper's imports beyond the base install (``"llm"``).
        imports: top-level modules the paper imports from that extra (checked before a run).
        data_wheels: data-only wheels whose files the paper reads (``icml24.core.deps.DATA_WHEELS``).
    """

    slug: str
    number: int
    title: str
    authors: tuple[str, ...]
    arxiv: str | None = None
    official_code: str | None = None
    tags: tuple[str, ...] = field(default_factory=tuple)
    summary: str = ""
    extra: str | None = None
    imports: tuple[str, ...] = field(default_factory=tuple)
    data_wheels: tuple[str, ...] = field(default_factory=tuple)

    @property
    def url(self) -> str | None:
        return f"https://arxiv.org/abs/{self.arxiv}" if self.arxiv else None
