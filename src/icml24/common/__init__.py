"""Code shared by papers, and the design's building blocks for the papers to come (rl, diffusion, experts:
one paper each so far; docs/architecture.md, "Shared code", says which paper uses which module). Each module
has its own tests in tests/test_common.py."""
